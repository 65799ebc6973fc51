"""Statistics, after the report in the pipeline: the agreement coefficients of
`iescore.stats.agreement` over units that each annotator gives a category (or leaves
missing): Cohen's kappa, Fleiss' kappa, Krippendorff's alpha (nominal), and their
per-label forms on units binarised to "in a span of this label or not".

A category is an integer ``>= 0``; ``-1`` is a missing value (a unit the annotator did
not annotate). Every coefficient is ``None`` where it is undefined (no units, or chance
agreement 1: a single category throughout).

Krippendorff's alpha (Krippendorff 2011, "Computing Krippendorff's alpha-reliability")
with ``m_u`` the values of unit ``u``, only units with ``m_u >= 2`` pairable, ``n`` the
pairable values, ``n_c`` those of category ``c``, and ``S`` the sum over units of the
ordered pairs of a unit's values that agree, each divided by ``m_u - 1``:
``alpha = 1 - (n - 1) (n - S) / (n^2 - sum_c n_c^2)``.

>>> v = np.array([[0, 1, 1, -1], [0, 1, 0, 1], [-1, 1, 0, 1]])
>>> round(krippendorff_alpha(v), 12)  # n 10; S = 2 + 3 + 1 + 2 = 8; n_0 4, n_1 6: 1 - 9 * 2 / (100 - 52)
0.625
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["cohen_kappa", "fleiss_kappa", "krippendorff_alpha", "label_kappas", "label_alphas"]


def cohen_kappa(x: np.ndarray, y: np.ndarray) -> float | None:
    """Cohen's kappa of two raters' categories (``None`` when chance agreement is 1).

    >>> cohen_kappa(np.array([0, 0, 1, 1]), np.array([0, 1, 1, 1]))  # po 3/4, pe 1/2*1/4 + 1/2*3/4
    0.5
    """
    n = len(x)
    if n == 0:
        return None
    k = int(max(x.max(), y.max())) + 1
    po = float(np.sum(x == y)) / n
    pe = float(np.sum(np.bincount(x, minlength=k) * np.bincount(y, minlength=k))) / (n * n)
    return None if pe == 1 else (po - pe) / (1 - pe)


def fleiss_kappa(cats: np.ndarray) -> float | None:
    """Fleiss' kappa of ``(raters, units)`` categories (``None`` when chance agreement is 1).

    >>> round(fleiss_kappa(np.array([[0, 1], [0, 1], [0, 0]])), 12)  # P = (1, 1/3), P_e = (4/6)^2 + (2/6)^2
    0.25
    """
    r, n = cats.shape
    if n == 0 or r < 2:
        return None
    k = int(cats.max()) + 1
    counts = np.zeros((n, k), dtype=np.int64)
    for row in cats:
        counts[np.arange(n), row] += 1
    P = (np.sum(counts * counts, axis=1) - r) / (r * (r - 1))
    p = counts.sum(axis=0) / (n * r)
    pe = float(np.sum(p * p))
    return None if pe == 1 else (float(P.mean()) - pe) / (1 - pe)


def _alpha(n: float, s: float, squares: float) -> float | None:
    den = n * n - squares
    return None if n < 2 or den <= 0 else 1.0 - (n - 1) * (n - s) / den


def krippendorff_alpha(values: np.ndarray) -> float | None:
    """Krippendorff's alpha, nominal, of ``(annotators, units)`` categories, ``-1`` for a
    missing value (the module docstring); ``None`` with fewer than two pairable values or a
    single category among them."""
    values = np.asarray(values, dtype=np.int64)
    present = values >= 0
    m = present.sum(axis=0)
    pairable = m >= 2
    if not pairable.any():
        return None
    v, p, mm = values[:, pairable], present[:, pairable], m[pairable].astype(np.float64)
    agree = np.zeros(v.shape[1], dtype=np.int64)  # ordered pairs of annotators that agree, per unit
    for i in range(len(v)):
        for j in range(i + 1, len(v)):
            agree += 2 * (p[i] & p[j] & (v[i] == v[j]))
    n_c = np.bincount(v[p])
    n = float(mm.sum())
    return _alpha(n, float(np.sum(agree / (mm - 1))), float(np.sum(n_c.astype(np.float64) ** 2)))


def label_kappas(n: int, a: np.ndarray, b: np.ndarray, n_labels: int, units: int | None = None) -> list[float | None]:
    """Cohen's kappa per label of two annotators on ``n`` units binarised per label:
    ``a`` and ``b`` hold ``label * units + unit`` (``units`` default ``n``) for every unit in
    a span of that label (each once), among the same ``n`` units. Computed from the 2x2
    table in integers: ``(n * agreeing - E) / (n^2 - E)``, ``E = n_a n_b + (n - n_a)(n - n_b)``.

    >>> label_kappas(4, np.array([0, 1, 4]), np.array([1, 6]), 2)  # label 0: a {0, 1}, b {1}; label 1: a {0}, b {2}
    [0.5, -0.3333333333333333]
    """
    stride = max(n if units is None else units, 1)
    na = np.bincount(a // stride, minlength=n_labels).tolist()
    nb = np.bincount(b // stride, minlength=n_labels).tolist()
    nab = np.bincount(np.intersect1d(a, b, assume_unique=True) // stride, minlength=n_labels).tolist()
    out: list[float | None] = []
    for x, y, both in zip(na, nb, nab):
        e = x * y + (n - x) * (n - y)
        den = n * n - e
        out.append(None if den == 0 else (n * (n - x - y + 2 * both) - e) / den)
    return out


def label_alphas(present: np.ndarray, positives: Sequence[np.ndarray], n_labels: int) -> list[float | None]:
    """Krippendorff's alpha per label over ``(annotators, units)`` ``present`` (a value, or
    missing), every unit binarised per label: ``positives[i]`` holds ``label * units + unit``
    for the units annotator ``i`` puts in a span of that label (each once; present units only).
    Units no annotator puts in the label agree fully: only the others are visited.

    >>> present = np.ones((2, 3), dtype=bool)  # label 0: A {0}, B {0, 1}: n 6, S = 2 + 0 + 2 = 4, n_1 3
    >>> label_alphas(present, [np.array([0]), np.array([0, 1])], 1)  # 1 - 5 * 2 / (36 - 18)
    [0.4444444444444444]
    """
    units = present.shape[1]
    m = present.sum(axis=0)
    pairable = m >= 2
    n = float(m[pairable].sum())
    if not len(positives) or not units:
        return [None] * n_labels
    codes, k = np.unique(np.concatenate(positives), return_counts=True)
    unit, lab = codes % units, codes // units
    keep = pairable[unit]
    unit, lab, kk = unit[keep], lab[keep], k[keep].astype(np.float64)
    mu = m[unit].astype(np.float64)
    # a unit with k of its m values positive: (k(k-1) + (m-k)(m-k-1)) / (m-1) in place of m
    term = (kk * (kk - 1) + (mu - kk) * (mu - kk - 1)) / (mu - 1) - mu
    s = n + np.bincount(lab, weights=term, minlength=n_labels)
    n1 = np.bincount(lab, weights=kk, minlength=n_labels)
    return [_alpha(n, float(si), float(x * x + (n - x) * (n - x))) for si, x in zip(s.tolist(), n1.tolist())]
