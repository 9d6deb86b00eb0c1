#!/usr/bin/python3
"""Builds tiny random-weight CLIP/ViT model folders, test images and PyTorch + PIL
reference outputs for the native CLIP runtime's parity tests. Run once with
Debian's python3, python3-torch and python3-pil:

    /usr/bin/python3 scripts/make_clip_fixtures.py tests/fixtures/clip

The reference is independent of Eagle's code: preprocessing is PIL's Image.resize with
Image.BICUBIC on the shorter side (torchvision's Resize size rule), torchvision's
CenterCrop rounding, ToTensor and Normalize written out; the towers are written with
torch.nn.functional (conv2d patch embedding, scaled dot-product attention, layer_norm,
gelu / quick_gelu / silu) following each project's module code:
  openclip-vit   OpenCLIP VisionTransformer (ln_pre, resblocks with in_proj, ln_post, proj)
  openclip-timm  BiomedCLIP's shape: timm ViT trunk (patch bias, eps 1e-6) + head.proj,
                 and the HF BERT text tower with the MLP projection (cls pooler)
  hf-clip        Hugging Face CLIPVisionModel + visual_projection, quick_gelu
  timm-reg       UNI2-h's shape: timm ViT with register tokens, positions on patches
                 only, LayerScale and SwiGLU (packed, SiLU), no projection
The committed fixtures let CI check parity without torch.
"""
import json
import math
import os
import struct
import sys

import torch
import torch.nn.functional as F
from PIL import Image

sys.path.insert(0, os.path.dirname(__file__))
from make_bert_fixtures import WORDS, vocab_for, tokenize, save_safetensors  # noqa: E402

OPENAI_MEAN, OPENAI_STD = [0.48145466, 0.4578275, 0.40821073], [0.26862954, 0.26130258, 0.27577711]
IMAGENET_MEAN, IMAGENET_STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
TEXTS = ["egfr mutation in lung cancer", "the patient", "insulin for diabetes",
         "pd-1 inhibitor therapy response and survival in the trial of patients with her2 breast cancer tumors"]


def make_images(out_dir, gen):
    """Smooth gradients plus noise and sharp edges (so a wrong filter shows), in odd sizes:
    downscale both ways, upscale, and a square that needs no resize at 32 px."""
    sizes = [(97, 61), (40, 300), (20, 20), (32, 32), (400, 300), (32, 51)]
    names = []
    for i, (w, h) in enumerate(sizes):
        y = torch.linspace(0, 1, h)[:, None].expand(h, w)
        x = torch.linspace(0, 1, w)[None, :].expand(h, w)
        r = (x * 255)
        g = (y * 255)
        b = ((x + y) * 4 % 1 > 0.5).float() * 255
        img = torch.stack([r, g, b], -1) + torch.randn(h, w, 3, generator=gen) * 12
        img = img.clamp(0, 255).round().to(torch.uint8)
        name = f"image-{i}-{w}x{h}.png"
        Image.fromarray(img.numpy(), "RGB").save(os.path.join(out_dir, name))
        names.append(name)
    return names


def pil_resize_cases(out_dir, images):
    """PIL's bicubic output for a few sizes, kept as PNG: the runtime must match it byte for byte."""
    cases = []
    for name, (w, h) in [(images[0], (50, 32)), (images[1], (24, 180)), (images[2], (64, 64)),
                         (images[4], (298, 224)), (images[4], (7, 300))]:
        out = f"pil-{os.path.splitext(name)[0]}-{w}x{h}.png"
        Image.open(os.path.join(out_dir, name)).convert("RGB").resize((w, h), Image.BICUBIC).save(os.path.join(out_dir, out))
        cases.append({"input": name, "width": w, "height": h, "expected": out})
    return cases


def preprocess(path, size, mean, std, crop="torchvision"):
    img = Image.open(path).convert("RGB")
    w, h = img.size
    short, long = (w, h) if w <= h else (h, w)
    if short != size:  # torchvision Resize(size): the longer side is int(size * long / short)
        new_short, new_long = size, int(size * long / short)
        img = img.resize((new_short, new_long) if w <= h else (new_long, new_short), Image.BICUBIC)
    w, h = img.size
    if crop == "torchvision":  # CenterCrop: int(round(margin / 2.0)), Python's round half to even
        top, left = int(round((h - size) / 2.0)), int(round((w - size) / 2.0))
    else:  # Hugging Face image_transforms.center_crop: margin // 2
        top, left = (h - size) // 2, (w - size) // 2
    img = img.crop((left, top, left + size, top + size))
    t = torch.tensor(list(img.getdata()), dtype=torch.float32).view(size, size, 3).permute(2, 0, 1) / 255
    return (t - torch.tensor(mean)[:, None, None]) / torch.tensor(std)[:, None, None]


def rnd(gen, *shape, scale=0.05):
    return torch.randn(*shape, generator=gen) * scale


def act(name, x):
    return {"gelu": F.gelu, "quick_gelu": lambda t: t * torch.sigmoid(1.702 * t), "silu": F.silu}[name](x)


def attention(x, wqkv, bqkv, wo, bo, heads):
    B, L, W = x.shape
    d = W // heads
    qkv = F.linear(x, wqkv, bqkv).view(B, L, 3, heads, d).permute(2, 0, 3, 1, 4)
    q, k, v = qkv[0], qkv[1], qkv[2]
    a = ((q @ k.transpose(-1, -2)) / math.sqrt(d)).softmax(-1) @ v
    return F.linear(a.permute(0, 2, 1, 3).reshape(B, L, W), wo, bo)


def vit_forward(t, x, c):
    """A ViT on NCHW images with the tensors `t` of one block/naming convention given by `c`."""
    B = x.shape[0]
    W = c["width"]
    e = F.conv2d(x, t["patch_w"], t.get("patch_b"), stride=c["patch"]).flatten(2).transpose(1, 2)
    prefix = [t["cls"].view(1, 1, W).expand(B, 1, W)]
    if "reg" in t:
        prefix.append(t["reg"].view(1, -1, W).expand(B, -1, W))
    if c.get("pos_on_patches"):
        e = e + t["pos"].view(1, -1, W)
        x = torch.cat(prefix + [e], 1)
    else:
        x = torch.cat(prefix + [e], 1) + t["pos"].view(1, -1, W)
    eps = c["eps"]
    if "ln_pre_w" in t:
        x = F.layer_norm(x, (W,), t["ln_pre_w"], t["ln_pre_b"], eps)
    for blk in t["blocks"]:
        h = F.layer_norm(x, (W,), blk["ln1_w"], blk["ln1_b"], eps)
        a = attention(h, blk["qkv_w"], blk["qkv_b"], blk["out_w"], blk["out_b"], c["heads"])
        x = x + (a * blk["ls1"] if "ls1" in blk else a)
        h = F.layer_norm(x, (W,), blk["ln2_w"], blk["ln2_b"], eps)
        f = F.linear(h, blk["fc1_w"], blk["fc1_b"])
        if c.get("glu"):
            x1, x2 = f.chunk(2, dim=-1)  # timm GluMlp, gate_last=False
            f = act(c["act"], x1) * x2
        else:
            f = act(c["act"], f)
        m = F.linear(f, blk["fc2_w"], blk["fc2_b"])
        x = x + (m * blk["ls2"] if "ls2" in blk else m)
    x = F.layer_norm(x, (W,), t["ln_post_w"], t["ln_post_b"], eps)
    pooled = x[:, 0]
    if "proj" in t:
        pooled = pooled @ t["proj"]  # [W, D]
    return pooled


def vit_tensors(gen, c):
    W, P, G, hid = c["width"], c["patch"], c["image_size"] // c["patch"], c["mlp_hidden"]
    regs = c.get("reg_tokens", 0)
    positions = G * G + (0 if c.get("pos_on_patches") else 1 + regs)
    t = {"patch_w": rnd(gen, W, 3, P, P, scale=0.1), "cls": rnd(gen, W, scale=0.5), "pos": rnd(gen, positions, W, scale=0.5),
         "ln_post_w": 1 + rnd(gen, W), "ln_post_b": rnd(gen, W), "blocks": []}
    if c.get("patch_bias"):
        t["patch_b"] = rnd(gen, W)
    if regs:
        t["reg"] = rnd(gen, regs, W, scale=0.5)
    if c.get("ln_pre"):
        t["ln_pre_w"], t["ln_pre_b"] = 1 + rnd(gen, W), rnd(gen, W)
    for _ in range(c["layers"]):
        blk = {"ln1_w": 1 + rnd(gen, W), "ln1_b": rnd(gen, W), "ln2_w": 1 + rnd(gen, W), "ln2_b": rnd(gen, W),
               "qkv_w": rnd(gen, 3 * W, W, scale=0.2), "qkv_b": rnd(gen, 3 * W), "out_w": rnd(gen, W, W, scale=0.2),
               "out_b": rnd(gen, W), "fc1_w": rnd(gen, (2 if c.get("glu") else 1) * hid, W, scale=0.2),
               "fc1_b": rnd(gen, (2 if c.get("glu") else 1) * hid), "fc2_w": rnd(gen, W, hid, scale=0.2),
               "fc2_b": rnd(gen, W)}
        if c.get("layer_scale"):
            blk["ls1"], blk["ls2"] = 0.5 + rnd(gen, W), 0.5 + rnd(gen, W)
        t["blocks"].append(blk)
    if c.get("embed_dim"):
        t["proj"] = rnd(gen, W, c["embed_dim"], scale=0.2)
    return t


def names_openclip(t, pre="visual."):
    out = {pre + "conv1.weight": t["patch_w"], pre + "class_embedding": t["cls"], pre + "positional_embedding": t["pos"],
           pre + "ln_pre.weight": t["ln_pre_w"], pre + "ln_pre.bias": t["ln_pre_b"],
           pre + "ln_post.weight": t["ln_post_w"], pre + "ln_post.bias": t["ln_post_b"], pre + "proj": t["proj"]}
    for i, b in enumerate(t["blocks"]):
        p = f"{pre}transformer.resblocks.{i}."
        out.update({p + "ln_1.weight": b["ln1_w"], p + "ln_1.bias": b["ln1_b"], p + "ln_2.weight": b["ln2_w"],
                    p + "ln_2.bias": b["ln2_b"], p + "attn.in_proj_weight": b["qkv_w"], p + "attn.in_proj_bias": b["qkv_b"],
                    p + "attn.out_proj.weight": b["out_w"], p + "attn.out_proj.bias": b["out_b"],
                    p + "mlp.c_fc.weight": b["fc1_w"], p + "mlp.c_fc.bias": b["fc1_b"],
                    p + "mlp.c_proj.weight": b["fc2_w"], p + "mlp.c_proj.bias": b["fc2_b"]})
    return out


def names_hf(t):
    pre = "vision_model."
    out = {pre + "embeddings.patch_embedding.weight": t["patch_w"], pre + "embeddings.class_embedding": t["cls"],
           pre + "embeddings.position_embedding.weight": t["pos"], pre + "pre_layrnorm.weight": t["ln_pre_w"],
           pre + "pre_layrnorm.bias": t["ln_pre_b"], pre + "post_layernorm.weight": t["ln_post_w"],
           pre + "post_layernorm.bias": t["ln_post_b"], "visual_projection.weight": t["proj"].t().contiguous()}
    for i, b in enumerate(t["blocks"]):
        p = f"{pre}encoder.layers.{i}."
        W = b["ln1_w"].shape[0]
        for j, n in enumerate(("q_proj", "k_proj", "v_proj")):
            out[p + f"self_attn.{n}.weight"] = b["qkv_w"][j * W:(j + 1) * W].contiguous()
            out[p + f"self_attn.{n}.bias"] = b["qkv_b"][j * W:(j + 1) * W].contiguous()
        out.update({p + "layer_norm1.weight": b["ln1_w"], p + "layer_norm1.bias": b["ln1_b"],
                    p + "layer_norm2.weight": b["ln2_w"], p + "layer_norm2.bias": b["ln2_b"],
                    p + "self_attn.out_proj.weight": b["out_w"], p + "self_attn.out_proj.bias": b["out_b"],
                    p + "mlp.fc1.weight": b["fc1_w"], p + "mlp.fc1.bias": b["fc1_b"],
                    p + "mlp.fc2.weight": b["fc2_w"], p + "mlp.fc2.bias": b["fc2_b"]})
    return out


def names_timm(t, pre=""):
    W = t["cls"].shape[0]
    out = {pre + "patch_embed.proj.weight": t["patch_w"], pre + "patch_embed.proj.bias": t["patch_b"],
           pre + "cls_token": t["cls"].view(1, 1, W), pre + "pos_embed": t["pos"].view(1, -1, W),
           pre + "norm.weight": t["ln_post_w"], pre + "norm.bias": t["ln_post_b"]}
    if "reg" in t:
        out[pre + "reg_token"] = t["reg"].view(1, -1, W)
    for i, b in enumerate(t["blocks"]):
        p = f"{pre}blocks.{i}."
        out.update({p + "norm1.weight": b["ln1_w"], p + "norm1.bias": b["ln1_b"], p + "norm2.weight": b["ln2_w"],
                    p + "norm2.bias": b["ln2_b"], p + "attn.qkv.weight": b["qkv_w"], p + "attn.qkv.bias": b["qkv_b"],
                    p + "attn.proj.weight": b["out_w"], p + "attn.proj.bias": b["out_b"],
                    p + "mlp.fc1.weight": b["fc1_w"], p + "mlp.fc1.bias": b["fc1_b"],
                    p + "mlp.fc2.weight": b["fc2_w"], p + "mlp.fc2.bias": b["fc2_b"]})
        if "ls1" in b:
            out[p + "ls1.gamma"], out[p + "ls2.gamma"] = b["ls1"], b["ls2"]
    return out


def bert_text_tower(gen, hidden, layers, heads, inter, max_pos, vocab):
    """BERT tensors (HF names) and an independent forward pass: CLS of the last layer."""
    w = {"embeddings.word_embeddings.weight": rnd(gen, len(vocab), hidden, scale=0.5),
         "embeddings.position_embeddings.weight": rnd(gen, max_pos, hidden, scale=0.5),
         "embeddings.token_type_embeddings.weight": rnd(gen, 2, hidden, scale=0.5),
         "embeddings.LayerNorm.weight": 1 + rnd(gen, hidden), "embeddings.LayerNorm.bias": rnd(gen, hidden)}
    for l in range(layers):
        p = f"encoder.layer.{l}."
        for n in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
            w[p + n + ".weight"], w[p + n + ".bias"] = rnd(gen, hidden, hidden, scale=0.2), rnd(gen, hidden)
        w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"] = 1 + rnd(gen, hidden), rnd(gen, hidden)
        w[p + "intermediate.dense.weight"], w[p + "intermediate.dense.bias"] = rnd(gen, inter, hidden, scale=0.2), rnd(gen, inter)
        w[p + "output.dense.weight"], w[p + "output.dense.bias"] = rnd(gen, hidden, inter, scale=0.2), rnd(gen, hidden)
        w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"] = 1 + rnd(gen, hidden), rnd(gen, hidden)

    def forward(ids):
        x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:len(ids)] \
            + w["embeddings.token_type_embeddings.weight"][0]
        x = F.layer_norm(x, (hidden,), w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], 1e-12)[None]
        for l in range(layers):
            p = f"encoder.layer.{l}."
            qkv_w = torch.cat([w[p + f"attention.self.{n}.weight"] for n in ("query", "key", "value")])
            qkv_b = torch.cat([w[p + f"attention.self.{n}.bias"] for n in ("query", "key", "value")])
            a = attention(x, qkv_w, qkv_b, w[p + "attention.output.dense.weight"], w[p + "attention.output.dense.bias"], heads)
            x = F.layer_norm(a + x, (hidden,), w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"], 1e-12)
            f = F.gelu(F.linear(x, w[p + "intermediate.dense.weight"], w[p + "intermediate.dense.bias"]))
            x = F.layer_norm(F.linear(f, w[p + "output.dense.weight"], w[p + "output.dense.bias"]) + x, (hidden,),
                             w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], 1e-12)
        return x[0, 0]
    return w, forward


def l2(v):
    return v / v.norm(dim=-1, keepdim=True)


def write_model(out_dir, name, config_files, tensors, images, size, mean, std, t, c, text=None, crop="torchvision"):
    folder = os.path.join(out_dir, name)
    os.makedirs(folder, exist_ok=True)
    for fname, content in config_files.items():
        with open(os.path.join(folder, fname), "w") as f:
            if isinstance(content, str):
                f.write(content)
            else:
                json.dump(content, f, indent=1)
    weights = "open_clip_model.safetensors" if "open_clip_config.json" in config_files else "model.safetensors"
    save_safetensors(os.path.join(folder, weights), tensors)
    ref = {"images": images, "image_embeddings": []}
    with torch.no_grad():
        for img in images:
            x = preprocess(os.path.join(out_dir, img), size, mean, std, crop)[None]
            ref["image_embeddings"].append(l2(vit_forward(t, x, c))[0].tolist())
        if text:
            ref["texts"], ref["text_embeddings"] = TEXTS, [l2(text(s)).tolist() for s in TEXTS]
    with open(os.path.join(folder, "reference.json"), "w") as f:
        json.dump(ref, f)


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    gen = torch.Generator().manual_seed(14)
    images = make_images(out_dir, gen)
    with open(os.path.join(out_dir, "pil_resize.json"), "w") as f:
        json.dump(pil_resize_cases(out_dir, images), f, indent=1)
    # The last image (32 x 51) has an odd crop margin: torchvision and HF start 1 px apart.
    model_images = images[:4] + images[5:]

    # OpenCLIP native ViT (nn.GELU), image-only.
    c = {"width": 32, "patch": 8, "image_size": 32, "layers": 2, "heads": 2, "mlp_hidden": 128, "embed_dim": 16,
         "ln_pre": True, "eps": 1e-5, "act": "gelu"}
    t = vit_tensors(gen, c)
    cfg = {"model_cfg": {"embed_dim": 16, "vision_cfg": {"image_size": 32, "layers": 2, "width": 32, "head_width": 16,
                                                         "patch_size": 8, "mlp_ratio": 4.0}},
           "preprocess_cfg": {"mean": OPENAI_MEAN, "std": OPENAI_STD}}
    write_model(out_dir, "openclip-vit", {"open_clip_config.json": cfg}, names_openclip(t), model_images, 32,
                OPENAI_MEAN, OPENAI_STD, t, c)

    # BiomedCLIP's shape: timm trunk + head.proj, BERT text tower + MLP projection.
    c = {"width": 32, "patch": 8, "image_size": 32, "layers": 2, "heads": 4, "mlp_hidden": 64, "embed_dim": 16,
         "patch_bias": True, "eps": 1e-6, "act": "gelu"}
    t = vit_tensors(gen, c)
    tensors = names_timm(t, "visual.trunk.")
    tensors["visual.head.proj.weight"] = t["proj"].t().contiguous()
    vocab = vocab_for(WORDS)
    bert_w, bert_cls = bert_text_tower(gen, 24, 2, 2, 48, 64, vocab)
    tensors.update({"text.transformer." + k: v for k, v in bert_w.items()})
    p0, p2 = rnd(gen, 20, 24, scale=0.3), rnd(gen, 16, 20, scale=0.3)
    tensors["text.proj.0.weight"], tensors["text.proj.2.weight"] = p0, p2
    cls_id, sep_id = vocab.index("[CLS]"), vocab.index("[SEP]")

    def text(s):
        ids = torch.tensor([cls_id] + tokenize(s, vocab)[:62] + [sep_id])
        return F.linear(F.gelu(F.linear(bert_cls(ids), p0)), p2)
    cfg = {"model_cfg": {"embed_dim": 16,
                         "vision_cfg": {"timm_model_name": "vit_tiny_test_patch8_32", "heads": 4, "timm_pool": "",
                                        "timm_proj": "linear", "image_size": 32},
                         "text_cfg": {"hf_model_name": "tiny-bert", "hf_proj_type": "mlp", "heads": 2,
                                      "hf_pooler_type": "cls_last_hidden_state_pooler", "context_length": 64}},
           "preprocess_cfg": {"mean": OPENAI_MEAN, "std": OPENAI_STD}}
    write_model(out_dir, "openclip-timm", {"open_clip_config.json": cfg, "vocab.txt": "\n".join(vocab) + "\n"}, tensors,
                model_images, 32, OPENAI_MEAN, OPENAI_STD, t, c, text)

    # Hugging Face CLIPModel's vision half, quick_gelu.
    c = {"width": 32, "patch": 8, "image_size": 32, "layers": 2, "heads": 2, "mlp_hidden": 64, "embed_dim": 16,
         "ln_pre": True, "eps": 1e-5, "act": "quick_gelu"}
    t = vit_tensors(gen, c)
    cfg = {"model_type": "clip", "projection_dim": 16,
           "vision_config": {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64,
                             "patch_size": 8, "image_size": 32, "hidden_act": "quick_gelu", "layer_norm_eps": 1e-5}}
    pre = {"crop_size": {"height": 32, "width": 32}, "size": {"shortest_edge": 32}, "image_mean": OPENAI_MEAN,
           "image_std": OPENAI_STD, "resample": 3}
    write_model(out_dir, "hf-clip", {"config.json": cfg, "preprocessor_config.json": pre}, names_hf(t), model_images, 32,
                OPENAI_MEAN, OPENAI_STD, t, c, crop="hf")

    # UNI2-h's shape: register tokens, positions on patches only, LayerScale, SwiGLU.
    c = {"width": 32, "patch": 8, "image_size": 32, "layers": 2, "heads": 4, "mlp_hidden": 40, "reg_tokens": 4,
         "pos_on_patches": True, "layer_scale": True, "glu": True, "patch_bias": True, "eps": 1e-6, "act": "silu"}
    t = vit_tensors(gen, c)
    cfg = {"architecture": "vit_test_reg4_patch8_32", "num_classes": 0,
           "model_args": {"img_size": 32, "patch_size": 8, "depth": 2, "num_heads": 4, "embed_dim": 32, "init_values": 1e-5,
                          "no_embed_class": True, "mlp_layer": "swiglu_packed", "act_layer": "silu", "reg_tokens": 4},
           "pretrained_cfg": {"mean": IMAGENET_MEAN, "std": IMAGENET_STD, "interpolation": "bicubic", "crop_pct": 1.0}}
    write_model(out_dir, "timm-reg", {"config.json": cfg}, names_timm(t), model_images, 32, IMAGENET_MEAN,
                IMAGENET_STD, t, c)

    # A 224 px pipeline check: the preprocessed tensor's per-channel sums and a few
    # pixels, for each image, with OpenAI's constants.
    checks = []
    for img in images:
        x = preprocess(os.path.join(out_dir, img), 224, OPENAI_MEAN, OPENAI_STD)
        checks.append({"image": img, "sums": x.sum((1, 2)).tolist(),
                       "samples": [[ch, y, xx, x[ch, y, xx].item()] for ch, y, xx in
                                   [(0, 0, 0), (1, 100, 57), (2, 223, 223), (0, 111, 200), (2, 17, 3)]]})
    with open(os.path.join(out_dir, "preprocess_224.json"), "w") as f:
        json.dump(checks, f)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/clip")
