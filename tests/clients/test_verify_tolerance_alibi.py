"""ALiBi tables from BLOOM's and MPT's own code against `pe verify`.

peer_tables.bloom_alibi (transformers' build_alibi_tensor: float32
torch.pow slopes, bias slope·j) for 8 to 128 heads, its slopes, and
peer_tables.mpt_build_alibi_bias (llm-foundry: 1/pow(2, m) slopes, bias
slope·(j − (L−1)), or −|i−j|·slope with full=True): each legitimate table
passes under the default ALiBi rule (docs/verify.md, "Tolerance": ALiBi),
MPT's row form as `--alibi-bias shifted`. The faults fail, and the
diagnosis names them in ALiBi's terms (never "sinusoid"): another head
count, another max bias, bfloat16 slopes, a negated bias, MPT's shifted
form checked as the rows form (and the reverse), one slope moved by 2^-16.
"""
import torch

import peer_tables as P
from tolerance_util import diagnosis, verify

L = 512


def bias_args(heads, *extra, length=L):
    return ["--scheme", "alibi", "--heads", heads, "--max-len", length, "--tensor", "bias", *extra]


def test_bloom_and_mpt_tables_pass(pe, scratch, check):
    worst = 0
    for H in (8, 12, 16, 24, 32, 48, 64, 96, 112, 128):
        rc, ref, doc = verify(pe, scratch, P.bloom_alibi(H, L).numpy(), *bias_args(H))
        check(rc == 0, f"BLOOM bias, {H} heads: exit {rc}, {ref and ref['summary']}")
        worst = max(worst, ref["measured"] if ref else 0)
        if doc:
            check("ALiBi" in doc["tolerance"]["why"] and doc["tolerance"]["angle_unit"] == 0,
                  f"tolerance {doc['tolerance']}")
        slopes = P.bloom_alibi(H, 2)[:, 1:2].numpy()
        rc, ref, _ = verify(pe, scratch, slopes, "--scheme", "alibi", "--heads", H, "--max-len", 2, "--tensor", "slopes")
        check(rc == 0, f"BLOOM slopes, {H} heads: exit {rc}, {ref and ref['summary']}")
        worst = max(worst, ref["measured"] if ref else 0)
    for H in (12, 32, 64):
        rc, ref, _ = verify(pe, scratch, P.mpt_build_alibi_bias(H, L)[0, :, 0, :].numpy(), *bias_args(H, "--alibi-bias", "shifted"))
        check(rc == 0, f"MPT bias, {H} heads, --alibi-bias shifted: exit {rc}, {ref and ref['summary']}")
        worst = max(worst, ref["measured"] if ref else 0)
    full = P.mpt_build_alibi_bias(12, 64, full=True)[0].reshape(12 * 64, 64).numpy()
    rc, ref, _ = verify(pe, scratch, full, *bias_args(12, "--alibi-bias", "distance", length=64))
    check(rc == 0, f"MPT full bias, --alibi-bias distance: exit {rc}, {ref and ref['summary']}")
    print(f"ALiBi: worst {worst:.3f} of the limit")


def test_faults_fail_with_alibi_diagnoses(pe, scratch, check):
    moved = P.bloom_alibi(64, L).clone()
    moved[5] *= 1 + 2 ** -16
    bf16 = P.bloom_alibi(32, L)[:, 1:2].to(torch.bfloat16).float() * torch.arange(L).float()
    faults = [
        ("12 heads checked as 16", P.bloom_alibi(12, L), bias_args(16), "those of 12 heads, not 16: add --heads 12"),
        ("the first 12 of 16 heads checked as 12", P.bloom_alibi(16, L)[:12], bias_args(12), "the first 12 of 16 heads"),
        ("max bias 16 checked as 8", P.mpt_build_alibi_bias(32, L, alibi_bias_max=16)[0, :, 0, :],
         bias_args(32, "--alibi-bias", "shifted"), "max bias 16, not 8: add --max-bias 16"),
        ("slopes in bfloat16", bf16, bias_args(32), "rounded to bfloat16"),
        ("negated bias", -P.bloom_alibi(32, L), bias_args(32), "opposite sign"),
        ("MPT's shifted bias checked as rows", P.mpt_build_alibi_bias(12, L)[0, :, 0, :], bias_args(12),
         "MPT's form (llm-foundry build_alibi_bias), the rows form shifted by -511·slope per head, which softmax "
         "ignores: add --alibi-bias shifted"),
        ("BLOOM's rows checked as shifted", P.bloom_alibi(12, L), bias_args(12, "--alibi-bias", "shifted"),
         "add --alibi-bias rows"),
        ("one slope moved by 2^-16", moved, bias_args(64), "more than float32 powers"),
    ]
    for what, table, args, needle in faults:
        rc, ref, doc = verify(pe, scratch, table.numpy(), *args)
        text = diagnosis(doc)
        # Another head count fails the shape check first (no entry compared).
        check(rc == 1 and (ref is None or ref["status"] == "fail"), f"{what}: exit {rc}, {ref and ref['summary']}")
        check(needle in text and "sinusoid" not in text, f"{what}: diagnosis {text!r}, want {needle!r}")
