#!/usr/bin/python3
"""Builds tiny random-weight BERT model folders and PyTorch reference outputs for the
native runtime's parity tests. Run with Debian's python3 and python3-torch:

    /usr/bin/python3 scripts/make_bert_fixtures.py tests/fixtures/bert

The reference is an independent PyTorch implementation of Hugging Face's BertModel
forward pass (modeling_bert: embeddings + LayerNorm, self-attention with an additive
padding mask, GELU feed-forward, post-LayerNorm residuals; pooler tanh(dense(CLS)) and
a one-logit classifier for BertForSequenceClassification). The committed fixtures let
CI check parity without torch.
"""
import json
import math
import os
import struct
import sys

import torch
import torch.nn.functional as F

WORDS = ("the a of in and to with for on patient patients tumor tumors cancer lung breast "
         "egfr kras met her2 pd-1 inhibitor inhibitors therapy response survival trial dose "
         "adverse events label warnings insulin diabetes aspirin pain study results methods "
         "drug drugs gene genes protein mutation mutations resistance treatment").split()


def vocab_for(words):
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    out = specials + [w for w in words if "-" not in w] + ["-", "pd", "1"]
    seen, uniq = set(), []
    for t in out:
        if t not in seen:
            seen.add(t)
            uniq.append(t)
    return uniq


def tokenize(text, vocab):
    """Whitespace/punctuation split + dictionary lookup: with this vocabulary every
    word is a whole token, so this is exactly what BertTokenizer produces."""
    ids = []
    for word in text.lower().split():
        for piece in word.replace("-", " - ").split():
            ids.append(vocab.index(piece) if piece in vocab else vocab.index("[UNK]"))
    return ids


def encode(text, vocab, max_len):
    ids = tokenize(text, vocab)[: max_len - 2]
    ids = [vocab.index("[CLS]")] + ids + [vocab.index("[SEP]")]
    return ids, [0] * len(ids)


def encode_pair(a, b, vocab, max_len):
    x, y = tokenize(a, vocab), tokenize(b, vocab)
    while len(x) + len(y) > max_len - 3:  # HF "longest_first"
        if len(x) > len(y):
            x.pop()
        else:
            y.pop()
    cls, sep = vocab.index("[CLS]"), vocab.index("[SEP]")
    ids = [cls] + x + [sep] + y + [sep]
    return ids, [0] * (len(x) + 2) + [1] * (len(y) + 1)


def make_weights(cfg, classifier, gen):
    h, i = cfg["hidden_size"], cfg["intermediate_size"]

    def rnd(*shape):
        return torch.randn(*shape, generator=gen) * 0.05

    w = {
        "embeddings.word_embeddings.weight": rnd(cfg["vocab_size"], h),
        "embeddings.position_embeddings.weight": rnd(cfg["max_position_embeddings"], h),
        "embeddings.token_type_embeddings.weight": rnd(cfg["type_vocab_size"], h),
        "embeddings.LayerNorm.weight": 1 + rnd(h),
        "embeddings.LayerNorm.bias": rnd(h),
    }
    for l in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{l}."
        for name in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
            w[p + name + ".weight"] = rnd(h, h)
            w[p + name + ".bias"] = rnd(h)
        w[p + "attention.output.LayerNorm.weight"] = 1 + rnd(h)
        w[p + "attention.output.LayerNorm.bias"] = rnd(h)
        w[p + "intermediate.dense.weight"] = rnd(i, h)
        w[p + "intermediate.dense.bias"] = rnd(i)
        w[p + "output.dense.weight"] = rnd(h, i)
        w[p + "output.dense.bias"] = rnd(h)
        w[p + "output.LayerNorm.weight"] = 1 + rnd(h)
        w[p + "output.LayerNorm.bias"] = rnd(h)
    if classifier:
        w = {"bert." + k: v for k, v in w.items()}  # BertForSequenceClassification layout
        w["bert.pooler.dense.weight"] = rnd(h, h)
        w["bert.pooler.dense.bias"] = rnd(h)
        w["classifier.weight"] = rnd(1, h)
        w["classifier.bias"] = rnd(1)
    return w


def forward(w, cfg, ids, types):
    """HF BertModel.forward on a padded batch; returns last hidden states and mask."""
    pre = "bert." if "bert.embeddings.word_embeddings.weight" in w else ""
    g = lambda k: w[pre + k]
    h, heads, eps = cfg["hidden_size"], cfg["num_attention_heads"], cfg["layer_norm_eps"]
    d = h // heads
    L = max(len(s) for s in ids)
    B = len(ids)
    ids_t = torch.zeros(B, L, dtype=torch.long)
    types_t = torch.zeros(B, L, dtype=torch.long)
    mask = torch.zeros(B, L)
    for b, (s, t) in enumerate(zip(ids, types)):
        ids_t[b, : len(s)] = torch.tensor(s)
        types_t[b, : len(t)] = torch.tensor(t)
        mask[b, : len(s)] = 1
    pos = torch.arange(L).unsqueeze(0).expand(B, L)
    x = g("embeddings.word_embeddings.weight")[ids_t] + g("embeddings.position_embeddings.weight")[pos] \
        + g("embeddings.token_type_embeddings.weight")[types_t]
    x = F.layer_norm(x, (h,), g("embeddings.LayerNorm.weight"), g("embeddings.LayerNorm.bias"), eps)
    ext = (1.0 - mask)[:, None, None, :] * torch.finfo(torch.float32).min
    for l in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{l}."
        lin = lambda t, n: F.linear(t, g(p + n + ".weight"), g(p + n + ".bias"))
        split = lambda t: t.view(B, L, heads, d).permute(0, 2, 1, 3)
        q, k, v = split(lin(x, "attention.self.query")), split(lin(x, "attention.self.key")), split(lin(x, "attention.self.value"))
        scores = q @ k.transpose(-1, -2) / math.sqrt(d) + ext
        ctx = (scores.softmax(-1) @ v).permute(0, 2, 1, 3).reshape(B, L, h)
        x = F.layer_norm(lin(ctx, "attention.output.dense") + x, (h,), g(p + "attention.output.LayerNorm.weight"),
                         g(p + "attention.output.LayerNorm.bias"), eps)
        ff = F.gelu(lin(x, "intermediate.dense"))
        x = F.layer_norm(lin(ff, "output.dense") + x, (h,), g(p + "output.LayerNorm.weight"),
                         g(p + "output.LayerNorm.bias"), eps)
    return x, mask


def save_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for name, t in tensors.items():
        data = t.detach().to(torch.float32).contiguous().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [off, off + len(data)]}
        blobs.append(data)
        off += len(data)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


TEXTS = [
    "egfr mutation in lung cancer",
    "the patient",
    "pd-1 inhibitor therapy response and survival in the trial of patients with her2 breast cancer tumors",
    "insulin for diabetes",
    "zebrafish unknown words here",
    "adverse events warnings label dose results",
]
PAIRS = [
    ["egfr inhibitor", "egfr inhibitor therapy in lung cancer patients"],
    ["aspirin pain", "the study of aspirin for pain"],
    ["met resistance", "met mutation resistance to egfr inhibitor therapy and kras mutations in lung tumors with survival results"],
]


def build(out_dir, name, hidden, layers, heads, inter, max_pos, classifier, seed):
    gen = torch.Generator().manual_seed(seed)
    vocab = vocab_for(WORDS)
    cfg = {"architectures": ["BertForSequenceClassification" if classifier else "BertModel"],
           "model_type": "bert", "vocab_size": len(vocab), "hidden_size": hidden, "num_hidden_layers": layers,
           "num_attention_heads": heads, "intermediate_size": inter, "max_position_embeddings": max_pos,
           "type_vocab_size": 2, "layer_norm_eps": 1e-12, "hidden_act": "gelu"}
    w = make_weights(cfg, classifier, gen)
    folder = os.path.join(out_dir, name)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    with open(os.path.join(folder, "vocab.txt"), "w") as f:
        f.write("\n".join(vocab) + "\n")
    save_safetensors(os.path.join(folder, "model.safetensors"), w)
    ref = {"max_length": max_pos}
    with torch.no_grad():
        if classifier:
            enc = [encode_pair(a, b, vocab, max_pos) for a, b in PAIRS]
            ids, types = [e[0] for e in enc], [e[1] for e in enc]
            x, _ = forward(w, cfg, ids, types)
            pooled = torch.tanh(F.linear(x[:, 0], w["bert.pooler.dense.weight"], w["bert.pooler.dense.bias"]))
            logits = F.linear(pooled, w["classifier.weight"], w["classifier.bias"])[:, 0]
            ref.update({"pairs": PAIRS, "ids": ids, "type_ids": types, "logits": logits.tolist()})
        else:
            enc = [encode(t, vocab, max_pos) for t in TEXTS]
            ids, types = [e[0] for e in enc], [e[1] for e in enc]
            x, mask = forward(w, cfg, ids, types)
            cls = x[:, 0]
            mean = (x * mask[:, :, None]).sum(1) / mask.sum(1, keepdim=True)
            ref.update({"texts": TEXTS, "ids": ids, "cls": cls.tolist(), "mean": mean.tolist()})
    with open(os.path.join(folder, "reference.json"), "w") as f:
        json.dump(ref, f)
    print(f"{name}: hidden {hidden}, layers {layers}, heads {heads}, max_len {max_pos}, classifier {classifier}")


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/bert"
    build(out, "tiny-a", 32, 2, 4, 64, 64, False, 1)
    build(out, "tiny-b", 48, 3, 6, 96, 12, False, 2)  # max_len 12 truncates the long text
    build(out, "tiny-cross", 64, 1, 2, 128, 24, True, 3)  # truncates the long pair
