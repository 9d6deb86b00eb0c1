#!/usr/bin/python3
"""PyTorch peer for bench_encoders: random-weight BERT encoders of the given shapes,
run with torch's own fastest inference path (nn.TransformerEncoder with post-LayerNorm
GELU layers, the BERT layer, under inference_mode). Prints one JSON line per case.
Run with Debian's python3 and python3-torch (1.13)."""
import argparse
import json

import torch
from torch_timing import median_ms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--cases", required=True, help="model:hidden:layers:heads:ff:batch:seq,...")
    ap.add_argument("--min-seconds", type=float, default=2.0)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    for case in args.cases.split(","):
        name, h, layers, heads, ff, batch, seq = case.split(":")
        h, layers, heads, ff, batch, seq = map(int, (h, layers, heads, ff, batch, seq))
        layer = torch.nn.TransformerEncoderLayer(h, heads, ff, dropout=0.0, activation="gelu", batch_first=True,
                                                 norm_first=False, layer_norm_eps=1e-12)
        model = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False).eval()
        emb = torch.nn.Embedding(30522, h)
        pos = torch.nn.Embedding(512, h)
        norm = torch.nn.LayerNorm(h, eps=1e-12)
        ids = torch.randint(0, 30522, (batch, seq))
        positions = torch.arange(seq).unsqueeze(0).expand(batch, seq)

        def run():
            x = norm(emb(ids) + pos(positions))
            return model(x)

        ms, runs = median_ms(run, args.min_seconds)
        print(json.dumps({"bench": "encoders", "engine": "torch", "torch": torch.__version__, "model": name,
                          "batch": batch, "seq": seq, "threads": args.threads, "ms_per_batch": ms,
                          "seq_per_s": batch / (ms / 1000), "runs": runs}), flush=True)


if __name__ == "__main__":
    main()
