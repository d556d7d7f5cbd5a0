"""torchscale's xPos scale table against `pe verify --tensor scale`.

peer_tables.torchscale_xpos_scale (torchscale XPOS: ζ = (arange(0, D, 2) +
0.4·D) / (1.4·D) in float32, ζ ** (arange(min_pos, max_pos) / scale_base),
the last L rows) for head_dim 64 and 128, 512 to 4096 positions: each passes
under the default rule for a scale (docs/verify.md, "Tolerance": xPos
scale). The faults fail, named by the diagnosis (never as a sinusoid):
scale_base 256 checked as 512, a table made with an offset of 2 checked
without it.
"""
import peer_tables as P
from tolerance_util import diagnosis, verify


def args(D, L, *extra):
    return ["--scheme", "xpos", "--head-dim", D, "--max-len", L, "--tensor", "scale", *extra]


def test_torchscale_scale_passes(pe, scratch, check):
    worst = 0
    for D, L in ((64, 512), (128, 2048), (128, 4096), (96, 1000)):
        rc, ref, doc = verify(pe, scratch, P.torchscale_xpos_scale(D, L).numpy(), *args(D, L))
        check(rc == 0, f"xPos scale D={D}, L={L}: exit {rc}, {ref and ref['summary']}")
        if doc:
            worst = max(worst, ref["measured"])
            check("xPos scale" in doc["tolerance"]["why"], f"tolerance {doc['tolerance']['why']}")
    # With an offset (KV cache): torchscale's last L of L + offset rows, pe's --start.
    rc, ref, _ = verify(pe, scratch, P.torchscale_xpos_scale(128, 1024, offset=100).numpy(), *args(128, 1024, "--start", 100))
    check(rc == 0, f"xPos scale with offset 100: exit {rc}, {ref and ref['summary']}")
    print(f"xPos scale: worst {worst:.3f} of the limit")


def test_scale_faults_fail(pe, scratch, check):
    faults = {
        "scale_base 256 checked as 512": (P.torchscale_xpos_scale(128, 2048, scale_base=256),
                                          "scale_base 256, not 512: add --scale-base 256"),
        # offset 2 moves min_pos = floor(-(L + 2)/2) by one: the scale's positions shift by 1.
        "offset 2 checked as 0": (P.torchscale_xpos_scale(128, 2048, offset=2), "positions are shifted by 1"),
    }
    for what, (table, needle) in faults.items():
        rc, ref, doc = verify(pe, scratch, table.numpy(), *args(128, 2048))
        check(rc == 1 and ref and ref["status"] == "fail", f"{what}: exit {rc}, {ref and ref['summary']}")
        text = diagnosis(doc)
        check(needle in text and "sinusoid" not in text, f"{what}: diagnosis {text!r}, want {needle!r}")
