"""What a model may read: nothing outside the model's folder, from any entry point.

The rule (docs/security.md, "What a model may read"): the model's folder is
the folder given, or the folder of the file given; every companion file is
resolved beneath it (no link out, no '..', no absolute path), regular files
only, and read through the descriptor that was checked.

Each case plants a secret OUTSIDE the model's folder (a config with a
distinctive rope_theta, 7777777, and a safetensors file) and reaches for it
through every path a model offers: config.json as a link (to the file, to an
absolute path, through a linked folder), a shard or model.safetensors linked
out, ONNX companions in the parent folder, ONNX external data linked out, and
--hf-config of generate / verify / dot. strace -yy shows every descriptor
pe's process obtained with the path the kernel resolved it to; the test
fails if any of them is the secret (or anything under the secret folder),
whatever pe then printed. FIFOs in the folder are refused without blocking
(each run has a 60 s hang guard, which only a real hang reaches). A race
(config.json swapped between a file and a link out while pe runs, 60 runs)
never yields the secret's value.
"""
import json
import os
import shutil
import subprocess
import threading

import numpy as np
import torch

import gguf_models
import gguf_writer
from schemes_util import write_safetensors_f32

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "models")


def test_model_reads_stay_inside_the_model_folder(pe_bin, scratch, check):
    SECRET = os.path.join(scratch, "secret")
    os.makedirs(SECRET)
    LLAMA = json.load(open(os.path.join(DATA, "llama-3.1-8b", "config.json")))
    secret_cfg = dict(LLAMA, rope_theta=7777777.0)
    secret_cfg.pop("rope_scaling", None)
    json.dump(secret_cfg, open(os.path.join(SECRET, "config.json"), "w"))
    json.dump({"model": {"context_length": 4242, "decoder": {"head_size": 64}}},
              open(os.path.join(SECRET, "genai_config.json"), "w"))
    inv = (1.0 / 500000.0 ** (np.arange(0, 128, 2) / 128)).astype(np.float32)
    write_safetensors_f32(os.path.join(SECRET, "model.safetensors"), {"model.rotary_emb.inv_freq": inv})
    os.makedirs(os.path.join(SECRET, "sub"))
    json.dump(secret_cfg, open(os.path.join(SECRET, "sub", "config.json"), "w"))


    def traced(args, timeout=60):
        """Runs pe under strace; returns (result, the paths of every descriptor it obtained)."""
        log = os.path.join(scratch, "strace.txt")
        cmd = ["strace", "-f", "-qq", "-yy", "-e", "trace=open,openat,openat2,creat", "-o", log, pe_bin, *args]
        env = dict(os.environ)
        if "ASAN_OPTIONS" in env:  # LeakSanitizer cannot stop the world under ptrace (strace)
            env["ASAN_OPTIONS"] += ":detect_leaks=0"
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            return None, []
        opened = []
        for line in open(log, errors="replace"):
            # ... = 3</real/path>  (a successful open shows its descriptor's path)
            eq = line.rfind("= ")
            if eq < 0 or "<" not in line[eq:]:
                continue
            opened.append(line[eq:].split("<", 1)[1].rsplit(">", 1)[0])
        return r, opened


    def no_secret(name, args, want_exit=None, want_text=None, outside=()):
        r, opened = traced(args)
        if r is None:
            check(False, f"{name}: pe {' '.join(args)} hung (60 s hang guard)")
            return None
        leaks = [p for p in opened if os.path.realpath(SECRET) in p or p in [os.path.realpath(o) for o in outside]]
        check(not leaks, f"{name}: pe opened files outside the model's folder: {leaks[:3]}")
        out = r.stdout + r.stderr
        check("7777777" not in out and "4242" not in out, f"{name}: the secret's values reached the output")
        if want_exit is not None:
            check(r.returncode == want_exit, f"{name}: exit {r.returncode}, want {want_exit}: {r.stderr[:300]!r}")
        if want_exit == 2:
            lines = r.stderr.strip().splitlines()
            check(len(lines) >= 1 and lines[0].startswith("pe: error:"), f"{name}: not one error line: {r.stderr!r}")
        if want_text is not None:
            check(want_text in out, f"{name}: {want_text!r} not in the output: {out[:400]!r}")
        return r


    def model_dir(name):
        d = os.path.join(scratch, name)
        os.makedirs(d)
        return d


    # ---- Hugging Face folders ----
    d = model_dir("link-file")
    os.symlink(os.path.join("..", "secret", "config.json"), os.path.join(d, "config.json"))
    for cmd in (["inspect", d], ["verify", "--model", d]):
        no_secret(f"config.json -> ../secret ({cmd[0]})", cmd, 2, "outside the model's folder")

    d = model_dir("link-abs")
    os.symlink(os.path.join(SECRET, "config.json"), os.path.join(d, "config.json"))
    no_secret("config.json -> absolute", ["inspect", d], 2, "outside the model's folder")

    d = model_dir("link-through-folder")
    os.symlink(SECRET, os.path.join(d, "elsewhere"))
    os.symlink(os.path.join("elsewhere", "sub", "config.json"), os.path.join(d, "config.json"))
    no_secret("config.json through a linked folder", ["inspect", d], 2, "outside the model's folder")

    d = model_dir("weights-out")
    json.dump(LLAMA, open(os.path.join(d, "config.json"), "w"))
    os.symlink(os.path.join(SECRET, "model.safetensors"), os.path.join(d, "model.safetensors"))
    no_secret("model.safetensors linked out", ["verify", "--model", d], 2, "outside the model's folder")

    d = model_dir("shard-out")
    json.dump(LLAMA, open(os.path.join(d, "config.json"), "w"))
    json.dump({"weight_map": {"model.rotary_emb.inv_freq": "s1.safetensors"}},
              open(os.path.join(d, "model.safetensors.index.json"), "w"))
    os.symlink(os.path.join("..", "secret", "model.safetensors"), os.path.join(d, "s1.safetensors"))
    no_secret("shard linked out", ["inspect", d], 2, "outside the model's folder")

    d = model_dir("fifo-config")
    os.mkfifo(os.path.join(d, "config.json"))
    no_secret("config.json a FIFO", ["inspect", d], 2, "FIFO")

    d = model_dir("fifo-shard")
    json.dump(LLAMA, open(os.path.join(d, "config.json"), "w"))
    os.mkfifo(os.path.join(d, "model.safetensors"))
    no_secret("model.safetensors a FIFO", ["verify", "--model", d], 2, "FIFO")

    # A link that stays inside the folder is followed (the Hugging Face cache
    # links files to blobs; inside the folder that is allowed).
    d = model_dir("link-inside")
    os.makedirs(os.path.join(d, "blobs"))
    json.dump(LLAMA, open(os.path.join(d, "blobs", "abc"), "w"))
    os.symlink(os.path.join("blobs", "abc"), os.path.join(d, "config.json"))
    r = no_secret("config.json -> a file inside the folder", ["inspect", d, "--json"], 0)
    if r is not None and r.returncode == 0:
        check("500000" in r.stdout, f"link inside: the plan does not show rope_theta 500000: {r.stdout[:300]!r}")

    # ---- --hf-config of generate, verify, dot: the same rule ----
    d = model_dir("hf-config-link")
    os.symlink(os.path.join(SECRET, "config.json"), os.path.join(d, "config.json"))
    out = os.path.join(scratch, "g.safetensors")
    for what, cfg in (("folder", d), ("file", os.path.join(d, "config.json"))):
        no_secret(f"generate --hf-config {what}", ["generate", "--scheme", "rope", "--hf-config", cfg, "--max-len", "8",
                                                    "-o", out], 2, "outside the model's folder")
        check(not os.path.exists(out), f"generate --hf-config {what}: output left behind")
        no_secret(f"dot --hf-config {what}", ["dot", "--scheme", "rope", "--hf-config", cfg, "--max-len", "8"], 2)
    good = model_dir("hf-config-good")
    json.dump(LLAMA, open(os.path.join(good, "config.json"), "w"))
    subprocess.run([pe_bin, "generate", "--scheme", "rope", "--hf-config", good, "--max-len", "8", "-o", out], check=True)
    no_secret("verify --hf-config linked out", ["verify", out, "--scheme", "rope", "--hf-config", d], 2)
    no_secret("verify --hf-config inside", ["verify", out, "--scheme", "rope", "--hf-config", good], 0)
    d = model_dir("hf-config-fifo")
    os.mkfifo(os.path.join(d, "config.json"))
    no_secret("generate --hf-config FIFO", ["generate", "--scheme", "rope", "--hf-config", d, "--max-len", "8",
                                            "-o", out], 2, "FIFO")

    # ---- ONNX: companions beside the file only; external data beneath it ----
    try:
        import onnx
        from onnx import TensorProto, helper, numpy_helper
    except ImportError:  # python3-onnx is in the test set (scripts/setup-deps.sh)
        onnx = None
    if onnx is not None:
        def onnx_model(path, tensors, external=None):
            inits = [numpy_helper.from_array(a, name=n) for n, a in tensors.items()]
            graph = helper.make_graph([], "g", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
                                      initializer=inits)
            m = helper.make_model(graph, producer_name="pe-test")
            if external:
                for t in m.graph.initializer:
                    t.data_location = TensorProto.EXTERNAL
                    t.ClearField("raw_data")
                    e = t.external_data.add()
                    e.key, e.value = "location", external
            onnx.save_model(m, path)

        pos = np.arange(16, dtype=np.float32)[:, None] * inv[None, :32]
        cos = np.cos(pos).astype(np.float32)
        parent = model_dir("onnx-parent")
        json.dump(secret_cfg, open(os.path.join(parent, "config.json"), "w"))
        shutil.copy(os.path.join(SECRET, "genai_config.json"), os.path.join(parent, "genai_config.json"))
        child = os.path.join(parent, "child")
        os.makedirs(child)
        onnx_model(os.path.join(child, "model.onnx"), {"cos_cache": cos})
        # the parent's files are not the secret folder, so check their values never show
        r = no_secret("onnx: ../config.json and ../genai_config.json", ["inspect", os.path.join(child, "model.onnx")], 0,
                      outside=[os.path.join(parent, "config.json"), os.path.join(parent, "genai_config.json")])
        if r is not None:
            check("no config.json beside" in r.stdout, f"onnx parent: no note that the parent is not read: {r.stdout[:400]!r}")
        os.symlink(os.path.join(SECRET, "config.json"), os.path.join(child, "config.json"))
        no_secret("onnx: config.json beside, linked out", ["inspect", os.path.join(child, "model.onnx")], 2,
                  "outside the model's folder")
        os.symlink(os.path.join(SECRET, "genai_config.json"), os.path.join(child, "genai_config.json"))
        ext = model_dir("onnx-external")
        shutil.copy(os.path.join(SECRET, "model.safetensors"), os.path.join(SECRET, "weights.bin"))
        os.symlink(os.path.join(SECRET, "weights.bin"), os.path.join(ext, "weights.bin"))
        onnx_model(os.path.join(ext, "model.onnx"), {"cos_cache": cos}, external="weights.bin")
        no_secret("onnx: external data linked out", ["inspect", os.path.join(ext, "model.onnx"), "--dataset", "cos_cache"],
                  2, "outside the model's folder")
        onnx_model(os.path.join(ext, "m2.onnx"), {"cos_cache": cos}, external="../secret/weights.bin")
        no_secret("onnx: external data ../", ["inspect", os.path.join(ext, "m2.onnx"), "--dataset", "cos_cache"], 2, "'..'")

    # ---- checkpoints: a config.json beside is only noted, never followed out ----
    d = model_dir("torch-beside")
    os.symlink(os.path.join(SECRET, "config.json"), os.path.join(d, "config.json"))
    np.savez(os.path.join(d, "m.npz"), inv_freq=inv)
    no_secret("npz with a linked config beside", ["verify", "--model", os.path.join(d, "m.npz"), "--allow-empty"])
    torch.save({"model.rotary_emb.inv_freq": torch.from_numpy(inv)}, os.path.join(d, "m.pt"))
    no_secret("checkpoint with a linked config beside", ["inspect", os.path.join(d, "m.pt")], 0)

    # ---- a config naming its model with a control byte is refused, not printed ----
    d = model_dir("nul-type")
    json.dump(dict(LLAMA, model_type="lla\u0000ma\u001b[31m"), open(os.path.join(d, "config.json"), "w"))
    for cmd in (["inspect", d], ["verify", "--model", d],
                ["generate", "--scheme", "rope", "--hf-config", d, "--max-len", "4", "-o", out]):
        no_secret(f"model_type with control bytes ({cmd[0]})", cmd, 2, "control byte 0x00")

    # ---- config values out of their domain: a failing check, a warning, an error ----
    for key, value, shown in (("rope_theta", -500000.0, "-500000"), ("partial_rotary_factor", 1e308, "1e+308")):
        d = model_dir(f"domain-{key}")
        json.dump(dict(LLAMA, **{key: value}), open(os.path.join(d, "config.json"), "w"))
        r = subprocess.run([pe_bin, "verify", "--model", d], capture_output=True, text=True, timeout=60)
        check(r.returncode == 1 and "FAIL config" in r.stdout and "config.json" in r.stdout and shown in r.stdout,
              f"{key} {value}: verify --model exit {r.returncode}: {r.stdout[-300:]!r}")
        r = subprocess.run([pe_bin, "inspect", d], capture_output=True, text=True, timeout=60)
        check("warning: out of domain" in r.stdout, f"{key} {value}: inspect gives no warning: {r.stdout[-300:]!r}")
        r = subprocess.run([pe_bin, "generate", "--scheme", "rope", "--hf-config", d, "--max-len", "4", "-o", out],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 2 and "config" in r.stderr, f"{key} {value}: generate --hf-config: {r.returncode} {r.stderr!r}")

    # the same for a GGUF's metadata (gguf_models.py: llama.cpp's keys)
    g = os.path.join(scratch, "negative.gguf")
    gguf_models.base_model("llama", 8192, 4096, 32, 2, freq_base=-500000.0, rot=128).write(g)
    r = subprocess.run([pe_bin, "verify", "--model", g], capture_output=True, text=True, timeout=60)
    check(r.returncode == 1 and "FAIL config" in r.stdout and "negative.gguf" in r.stdout and "-500000" in r.stdout,
          f"gguf freq_base -500000: verify --model exit {r.returncode}: {r.stdout[-300:]!r}")

    # a GGUF stating pe's "not given" (-1) for a rope parameter: refused, not taken for absent
    w = gguf_models.base_model("llama", 8192, 4096, 32, 2, freq_base=500000.0, rot=128)
    w.add("llama.rope.scaling.type", gguf_writer.STRING, "linear")
    w.add("llama.rope.scaling.factor", gguf_writer.F32, -1.0)
    g = os.path.join(scratch, "sentinel.gguf")
    w.write(g)
    r = subprocess.run([pe_bin, "verify", "--model", g], capture_output=True, text=True, timeout=60)
    check(r.returncode == 1 and "FAIL config" in r.stdout and "llama.rope.scaling.factor: -1" in r.stdout,
          f"gguf factor -1: verify --model exit {r.returncode}: {r.stdout[-300:]!r}")
    r = subprocess.run([pe_bin, "generate", "--scheme", "rope", "--gguf", g, "--max-len", "4", "-o", out],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 2 and "llama.rope.scaling.factor: -1" in r.stderr, f"gguf factor -1: generate --gguf: {r.stderr!r}")

    # ---- a race: config.json swapped between a file and a link out while pe runs ----
    d = model_dir("race")
    real = os.path.join(d, "real.json")
    json.dump(LLAMA, open(real, "w"))
    stop = threading.Event()


    def swap():
        link, tmp = os.path.join(d, "config.json"), os.path.join(d, "config.tmp")
        while not stop.is_set():
            for target in (os.path.join(SECRET, "config.json"), "real.json"):
                try:
                    os.symlink(target, tmp)
                    os.replace(tmp, link)
                except OSError:
                    pass


    t = threading.Thread(target=swap)
    t.start()
    seen = {"ok": 0, "refused": 0, "leak": 0}
    try:
        for _ in range(60):
            r = subprocess.run([pe_bin, "inspect", d, "--json"], capture_output=True, text=True, timeout=60)
            if "7777777" in r.stdout + r.stderr:
                seen["leak"] += 1
            elif r.returncode == 0:
                seen["ok"] += 1
            else:
                seen["refused"] += 1
    finally:
        stop.set()
        t.join()
    check(seen["leak"] == 0, f"race: the secret's value was read in {seen['leak']} of 60 runs ({seen})")
    print(f"race: {seen}")

