#!/usr/bin/python3
"""PyTorch peer for bench_encoders' image tower: a random-weight CLIP ViT (OpenCLIP's
VisionTransformer structure: stride-p conv patch embedding, class token, positions,
ln_pre, pre-LayerNorm GELU blocks, ln_post on the class token, projection), run with
torch's own fastest inference path (nn.TransformerEncoder with norm_first layers under
inference_mode). Input: preprocessed 224x224 tensors (preprocessing is timed by
neither engine). Prints one JSON line per case. Debian's python3 and python3-torch."""
import argparse
import json
import os

import torch
from torch_timing import median_ms


def build_line():
    """How this torch was built: BLAS, oneDNN and CPU capability, from its own report."""
    lines = torch.__config__.show().splitlines()
    keep = [l.strip(" -") for l in lines if "MKL-DNN" in l or "CPU capability" in l]
    blas = [f.split("Build settings: ")[-1] for f in torch.__config__.show().split(", ") if "BLAS_INFO=" in f]
    # BLAS_INFO=generic: torch calls libblas.so.3, which Debian's alternatives resolve.
    lib = "/usr/lib/x86_64-linux-gnu/libblas.so.3"
    return "; ".join(keep + blas + ["libblas.so.3 -> " + os.path.realpath(lib)])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--cases", required=True, help="model:width:layers:heads:mlp:patch:image:embed:batch,...")
    ap.add_argument("--min-seconds", type=float, default=2.0)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    for case in args.cases.split(","):
        name, width, layers, heads, mlp, patch, image, embed, batch = case.split(":")
        width, layers, heads, mlp, patch, image, embed, batch = map(int, (width, layers, heads, mlp, patch, image, embed, batch))
        conv = torch.nn.Conv2d(3, width, patch, stride=patch, bias=False)
        grid = image // patch
        cls = torch.randn(width) * 0.02
        pos = torch.randn(grid * grid + 1, width) * 0.02
        ln_pre, ln_post = torch.nn.LayerNorm(width), torch.nn.LayerNorm(width)
        layer = torch.nn.TransformerEncoderLayer(width, heads, mlp, dropout=0.0, activation="gelu", batch_first=True,
                                                 norm_first=True, layer_norm_eps=1e-5)
        blocks = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False).eval()
        proj = torch.randn(width, embed) * 0.02
        x = torch.randn(batch, 3, image, image)

        def run():
            e = conv(x).flatten(2).transpose(1, 2)
            t = torch.cat([cls.view(1, 1, -1).expand(batch, 1, width), e], 1) + pos
            t = blocks(ln_pre(t))
            return ln_post(t[:, 0]) @ proj

        ms, runs = median_ms(run, args.min_seconds)
        print(json.dumps({"bench": "encoders", "engine": "torch", "torch": torch.__version__,
                          "torch_build": "Debian python3-torch: " + build_line(),
                          "model": name, "batch": batch, "image": image, "threads": args.threads, "ms_per_batch": ms,
                          "images_per_s": batch / (ms / 1000), "runs": runs}), flush=True)


if __name__ == "__main__":
    main()
