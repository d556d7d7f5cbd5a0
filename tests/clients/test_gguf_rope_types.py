"""GGUF rope types (IMROPE, MROPE, VISION) and one plan from a config and its GGUF.

Expected rope types: llama.cpp's llama_model_rope_type (src/llama-model.cpp),
transcribed at Agusx1211/llama-cpp-ds4f-m2-ultra @ 0642994d61ae69df35db2fa2a1d641b1c499782b
(a llama.cpp fork; the newest copy of that switch the project could read):

    QWEN3VL, QWEN3VLMOE, QWEN35, QWEN35MOE   -> LLAMA_ROPE_TYPE_IMROPE
    QWEN2VL, PADDLEOCR                       -> LLAMA_ROPE_TYPE_MROPE
    GLM4      use_mrope() ? MROPE : NORM
    GLM4_MOE  use_mrope() ? MROPE : NEOX
    HUNYUAN_VL use_mrope() ? MROPE : NEOX     (use_mrope: sections[0] > 0 && sections[1] > 0,
                                              src/llama-hparams.cpp)
    GEMMA4 -> NEOX; MISTRAL3, DEEPSEEK32 -> NORM; KIMI_LINEAR -> NONE

with the architecture names of LLM_ARCH_NAMES (src/llama-arch.cpp). A "clip"
file is an mmproj (mtmd's vision encoder): no text plan, named "vision".

The Qwen3-VL model: the positional keys of Qwen/Qwen3-VL-8B-Instruct's
config.json text_config (head_dim 128, 32 heads, 36 layers, rope_theta 5e6,
rope_scaling {mrope_section [24, 20, 20], mrope_interleaved true}); its GGUF
has the keys convert_hf_to_gguf.py writes for it (Qwen3VLTextModel:
qwen3vl.rope.dimension_sections = mrope_section padded to 4 with 0). At text
positions (t = h = w) M-RoPE is 1-D RoPE, so the table both must accept is
transformers' default rotary recipe (peer_tables.hf_inv_freq, torch).
"""
import json
import os

import numpy as np
import torch

import gguf_writer as gw
from gguf_models import base_model
from peer_tables import hf_inv_freq, hf_rope_cos_sin

QWEN3_VL_TEXT = {"model_type": "qwen3_vl_text", "head_dim": 128, "hidden_size": 4096, "num_attention_heads": 32,
                 "num_key_value_heads": 8, "num_hidden_layers": 36, "max_position_embeddings": 262144,
                 "rope_theta": 5000000.0,
                 "rope_scaling": {"mrope_interleaved": True, "mrope_section": [24, 20, 20], "rope_type": "default"}}


def qwen3_vl_folder(scratch):
    d = os.path.join(scratch, "qwen3-vl")
    os.makedirs(d, exist_ok=True)
    cfg = {"architectures": ["Qwen3VLForConditionalGeneration"], "model_type": "qwen3_vl", "text_config": QWEN3_VL_TEXT}
    json.dump(cfg, open(os.path.join(d, "config.json"), "w"))
    return d


def gguf(scratch, name, arch, sections=(24, 20, 20, 0), t=QWEN3_VL_TEXT):
    w = base_model(arch, t["max_position_embeddings"], t["hidden_size"], t["num_attention_heads"],
                   t["num_hidden_layers"], t["rope_theta"])
    w.add(arch + ".attention.head_count_kv", gw.U32, t["num_key_value_heads"])
    w.add(arch + ".attention.key_length", gw.U32, t["head_dim"])
    if sections is not None:
        w.add_array(arch + ".rope.dimension_sections", gw.I32, list(sections))
    return w.write(os.path.join(scratch, name))


def rope_type(pe, path):
    out = pe("inspect", path).stdout
    for line in out.splitlines():
        if line.strip().startswith("rope_type ="):
            return line.split("=", 1)[1].split()[0]
    return None


def test_rope_type_by_architecture(pe, scratch, check):
    cases = [("qwen3vl", (24, 20, 20, 0), "imrope"), ("qwen3vlmoe", (24, 20, 20, 0), "imrope"),
             ("qwen35", (11, 11, 10, 0), "imrope"), ("qwen35moe", (11, 11, 10, 0), "imrope"),
             ("qwen2vl", (16, 24, 24, 0), "mrope"), ("paddleocr", (16, 24, 24, 0), "mrope"),
             ("glm4", (8, 12, 12, 0), "mrope"), ("glm4", None, "norm"),
             ("glm4moe", (8, 12, 12, 0), "mrope"), ("glm4moe", None, "neox"),
             ("hunyuan_vl", (16, 24, 24, 0), "mrope"), ("hunyuan_vl", None, "neox"),
             ("gemma4", None, "neox"), ("mistral3", None, "norm"), ("deepseek32", None, "norm"),
             ("kimi-linear", None, "none")]
    for i, (arch, sections, want) in enumerate(cases):
        path = gguf(scratch, f"m{i}.gguf", arch, sections)
        got = rope_type(pe, path)
        check(got == want, f"{arch} sections {sections}: rope_type {got}, llama.cpp {want}")


def test_mrope_without_sections_has_no_plan(pe, scratch, check):
    path = gguf(scratch, "q3.gguf", "qwen3vl", sections=None)
    out = pe("inspect", path).stdout
    check("dimension_sections" in out and "no plan" in out, f"qwen3vl without sections:\n{out}")


def test_mmproj_is_vision(pe, scratch, check):
    w = gw.Writer()
    w.add("general.architecture", gw.STRING, "clip")
    w.add("clip.has_vision_encoder", gw.BOOL, True)
    path = w.write(os.path.join(scratch, "mmproj.gguf"))
    out = pe("inspect", path).stdout
    check(rope_type(pe, path) == "vision", f"mmproj: rope_type {rope_type(pe, path)}")
    check("vision-rope" in out and "plan: none" in out, f"mmproj: no text plan, names vision-rope:\n{out}")


def test_qwen3_vl_folder_and_gguf_one_plan(pe, scratch, check):
    folder = qwen3_vl_folder(scratch)
    good = gguf(scratch, "qwen3vl.gguf", "qwen3vl")
    r = pe("verify", "--model", folder, "--model", good, ok=False)
    check(r.returncode == 0 and "mrope_section" in r.stdout, f"faithful Qwen3-VL GGUF: exit {r.returncode}\n{r.stdout}{r.stderr}")
    # Converted as Qwen2-VL: MROPE (contiguous sections) where the model interleaves them.
    r = pe("verify", "--model", folder, "--model", gguf(scratch, "as-qwen2vl.gguf", "qwen2vl"), ok=False)
    fail = [l for l in r.stdout.splitlines() if l.startswith("FAIL")]
    check(r.returncode == 1 and any("mrope_section" in l and "interleaved" in l and "contiguous" in l for l in fail),
          f"Qwen3-VL converted as qwen2vl: exit {r.returncode}\n{r.stdout}")
    # Another model's sections.
    r = pe("verify", "--model", folder, "--model", gguf(scratch, "sections.gguf", "qwen3vl", (16, 24, 24, 0)), ok=False)
    fail = [l for l in r.stdout.splitlines() if l.startswith("FAIL")]
    check(r.returncode == 1 and any("24,20,20" in l and "16,24,24" in l for l in fail),
          f"sections 16,24,24 vs 24,20,20: exit {r.returncode}\n{r.stdout}")

    # One table, both readers: transformers' recipe at text positions.
    t = QWEN3_VL_TEXT
    inv, af = hf_inv_freq("default", t["head_dim"], t["rope_theta"])
    for start in (0, 100000):
        cos, sin = hf_rope_cos_sin(inv, af, 64, start=start)
        for name, arr in (("cos", cos), ("sin", sin)):
            npy = os.path.join(scratch, f"{name}{start}.npy")
            np.save(npy, arr.numpy())
            for how in (("--hf-config", os.path.join(folder, "config.json")), ("--gguf", good)):
                r = pe("verify", npy, "--scheme", "rope", *how, "--tensor", name, "--start", start, ok=False)
                check(r.returncode == 0, f"{name} from {start} with {how[0]}: exit {r.returncode}\n{r.stdout}{r.stderr}")
    # A table pe wrote from one reader (with its metadata) verifies against the other.
    a = os.path.join(scratch, "from-gguf.safetensors")
    b = os.path.join(scratch, "from-config.safetensors")
    pe("generate", "--scheme", "rope", "--gguf", good, "--max-len", 32, "-o", a)
    pe("generate", "--scheme", "rope", "--hf-config", folder, "--max-len", 32, "-o", b)
    r = pe("verify", a, "--scheme", "rope", "--hf-config", folder, ok=False)
    check(r.returncode == 0, f"--gguf table against --hf-config: exit {r.returncode}\n{r.stdout}{r.stderr}")
    r = pe("verify", b, "--scheme", "rope", "--gguf", good, ok=False)
    check(r.returncode == 0, f"--hf-config table against --gguf: exit {r.returncode}\n{r.stdout}{r.stderr}")
