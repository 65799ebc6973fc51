"""Statistics, after the report in the pipeline: confidence intervals and paired significance
tests by resampling documents, folds and inter-annotator agreement.

A report keeps its counts per document and label, and every measure is a
function of counts summed over documents. A bootstrap resample that draws
document ``d`` ``w[d]`` times therefore has the counts ``w @ X`` (``X`` the
documents x count-columns table of the report): no re-decoding, no re-matching.
All resamples at once are one matrix product ``W @ X`` (``W`` the resamples x
documents matrix of draw counts), and every measure of every resample is
computed column-wise from those sums with the report's own definitions:

* per-label P/R/F1/F_beta/Jaccard/SER/ERR/E from the label's summed counts;
* micro: counts summed over labels; macro: the mean over the labels whose
  measure is defined *in that resample* (the others are left out, as in the
  report); weighted: per-label measures weighted by the label's reference items
  in the resample (C+S+D, or TP+FN when only TP/FP/FN are counted);
* SER/ERR/E from the summed C/S/D/I; the token & separator model from the summed
  t-unit counts; token accuracy from the summed per-document token counts.

The resample that takes every document once reproduces ``report.to_dict()``
exactly (tested). Measure names ([`measure_names`][iescore.stats.table.measure_names]): ``precision``,
``recall``, ``f1``, ``f_beta`` (the configured headline average), ``micro_f1``,
``macro_f1``, ``weighted_f1`` (and ``_precision``, ``_recall``, ``_f_beta``, ``_jaccard``), ``jaccard``,
``macro_f1_of_macro_pr``, ``ser``, ``err``, ``e``, ``ser_weighted``,
``ts_f1_macro``, ``ts_f1_micro``, ``ts_token_f1_macro`` ... (the keys of the
report's ``ts`` block with ``ts_`` in front), ``token_accuracy``,
``token_accuracy_non_o``, and per label ``f1[PER]``, ``precision[PER]``, ``jaccard[PER]`` ...

Paired tests (systems scored on the same reference documents):

* ``"ar"``, approximate randomization (Riezler & Maxwell 2005), the default: per
  resample and document, the two systems' counts are swapped with probability 1/2;
  with ``d`` the observed ``|m_a - m_b|``, ``p = (#{|m_a* - m_b*| >= d} + 1) / (R + 1)``;
  with ``resamples="all"`` every one of the ``2**D`` swaps is enumerated and
  ``p = #{...} / 2**D`` (the exact permutation test);
* ``"bs"``, paired bootstrap, centred (Efron & Tibshirani 1993, section 16.4): both
  systems resampled with the same documents; with ``d* = m_a* - m_b*`` (signed) per
  resample, ``p = (#{|d* - mean(d*)| >= d} + 1) / (R + 1)``: the resampled
  differences, centred on their mean, stand for the differences of two alike systems.

Under no difference both reject at ``alpha`` in about ``alpha`` of data sets
(tested on simulated data sets); with few documents the bootstrap rejects a little
too often and the randomization test a little too rarely, hence the default.

``>=`` (not ``>``) makes a system compared with itself get p = 1. A resample
where the measure is undefined counts as at least as extreme (conservative).
Several systems against one baseline: Holm-Bonferroni adjusted p-values
(``correction: "holm"``). Systems are grouped where their differences are not
significant: sorted by the measure, each system joins the group of the best
system of the current group unless the paired test of the two (unadjusted, at
``alpha``) finds them different. (Holm over all pairs would need p < alpha / pairs,
below the smallest p-value 1/(R+1) of 1,000 resamples for more than 7 systems.)

Example (two documents, the second one wrong):
    >>> import iescore
    >>> r = iescore.score_tags(reference=[["B-PER"], ["B-LOC"]], prediction=[["B-PER"], ["O"]])
    >>> b = bootstrap(r, resamples=200, seed=1)
    >>> b.values["f1"], b.intervals["f1"]  # F1 = 2/3; resamples give 0 (no PER), 2/3 or 1
    (0.6666666666666666, (0.0, 1.0))
"""

from __future__ import annotations

from .agreement import Agreement, agreement, agreement_files, agreement_scored
from .coefficients import cohen_kappa, fleiss_kappa, krippendorff_alpha
from .folds import FoldSummary, folds, t_quantile
from .paired import Comparison, compare, holm
from .resample import BootstrapResult, all_resamples, bootstrap, bootstrap_counts
from .table import _point, measure_names, resample_measures

__all__ = ['bootstrap', 'compare', 'BootstrapResult', 'Comparison', 'measure_names', 'resample_measures', 'bootstrap_counts', 'all_resamples', 'holm', 'folds', 'FoldSummary', 't_quantile', 'agreement', 'Agreement', 'agreement_files', 'agreement_scored', 'cohen_kappa', 'fleiss_kappa', 'krippendorff_alpha']
