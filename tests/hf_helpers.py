"""Local Hugging Face objects for tests: a WordPiece fast tokenizer from a word list, and
a tiny randomly initialised BERT token classifier. Nothing is downloaded."""

from __future__ import annotations

WORDS = [
    "ada", "love", "##lace", "met", "charles", "bab", "##bage", "in", "london", "the", "royal",
    "society", "of", "published", "notes", "grace", "hop", "##per", "joined", "navy", "new", "york",
    ".", ",", "she", "wrote", "for", "harvard", "university",
]
LABELS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG"]


def fast_tokenizer(words: list[str] | None = None):
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab = {w: i for i, w in enumerate(specials + (WORDS if words is None else words))}
    tok = Tokenizer(models.WordPiece(vocab=vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
        sep_token="[SEP]", mask_token="[MASK]",
    )


def tiny_bert(num_labels=None, seed=0):
    import torch
    from transformers import BertConfig, BertForTokenClassification

    torch.manual_seed(seed)
    cfg = BertConfig(
        vocab_size=5 + len(WORDS), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=64, num_labels=num_labels or len(LABELS),
        id2label=dict(enumerate(LABELS)), label2id={n: i for i, n in enumerate(LABELS)},
    )
    return BertForTokenClassification(cfg)


def encode(tokenizer, sentences, tags):
    """Tokenise word lists; label the first sub-word of each word, -100 elsewhere (run_ner.py style)."""
    enc = tokenizer(sentences, is_split_into_words=True, padding=True)
    label2id = {n: i for i, n in enumerate(LABELS)}
    labels, word_ids = [], []
    for b in range(len(sentences)):
        wids = enc.word_ids(b)
        row, prev = [], None
        for w in wids:
            row.append(-100 if w is None or w == prev else label2id[tags[b][w]])
            prev = w
        labels.append(row)
        word_ids.append(wids)
    return enc, labels, word_ids
