#!/usr/bin/python3
"""Writes the test models of tests/data/onnx/ that must be exactly what torch.onnx.export
writes (make_test_models.py builds the others node by node with onnx.helper).

The seed thread as PyTorch writes it: an input repeated `g` times feeding a Conv with
groups=g, in the exporter's three forms, for Conv1d and Conv2d, with and without bias:

  repeat_tile_conv1d[_nobias].onnx    x.t().repeat(g, 1).unsqueeze(0)   Transpose → Tile (repeats from
                                                                        ConstantOfShape/Expand) → Unsqueeze
  repeat_cat_conv{1,2}d[_nobias].onnx torch.cat([x] * g, dim=1)         Concat
  repeat_expand_conv{1,2}d[_nobias].onnx
                                      x.unsqueeze(1).expand(n, g, ...).reshape(n, g·c, ...)
                                                                        Unsqueeze → Expand (shape from
                                                                        Mul/Equal/Where) → Reshape

Weights are seeded; opset 13. Run with /usr/bin/python3 (Debian's python3-torch).
"""

import io
import os

import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "onnx")
G = 3  # groups (copies)
C = 4  # channels of the original input
M = 6  # output channels


class TileConv1d(torch.nn.Module):
    """x [W, C] → x.t() [C, W] → repeat(g, 1) [g·C, W] → unsqueeze(0) → Conv1d(groups=g)."""

    def __init__(self, bias):
        super().__init__()
        self.conv = torch.nn.Conv1d(G * C, M, 3, groups=G, bias=bias)

    def forward(self, x):
        return self.conv(x.t().repeat(G, 1).unsqueeze(0))


class CatConv(torch.nn.Module):
    def __init__(self, bias, dims):
        super().__init__()
        conv = torch.nn.Conv2d if dims == 2 else torch.nn.Conv1d
        self.conv = conv(G * C, M, 3, groups=G, bias=bias)

    def forward(self, x):
        return self.conv(torch.cat([x] * G, dim=1))


class ExpandConv(torch.nn.Module):
    def __init__(self, bias, dims):
        super().__init__()
        conv = torch.nn.Conv2d if dims == 2 else torch.nn.Conv1d
        self.conv = conv(G * C, M, 3, groups=G, bias=bias)

    def forward(self, x):
        s = x.shape
        return self.conv(x.unsqueeze(1).expand(s[0], G, *s[1:]).reshape(s[0], G * s[1], *s[2:]))


def export(module, example, filename):
    buf = io.BytesIO()
    torch.onnx.export(module.eval(), example, buf, opset_version=13, input_names=["x"], output_names=["y"])
    with open(os.path.join(OUT, filename), "wb") as f:
        f.write(buf.getvalue())


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(0)
    for bias in (True, False):
        suffix = "" if bias else "_nobias"
        export(TileConv1d(bias), torch.randn(10, C), f"repeat_tile_conv1d{suffix}.onnx")
        for dims, example in ((1, torch.randn(1, C, 10)), (2, torch.randn(1, C, 8, 9))):
            export(CatConv(bias, dims), example, f"repeat_cat_conv{dims}d{suffix}.onnx")
            export(ExpandConv(bias, dims), example, f"repeat_expand_conv{dims}d{suffix}.onnx")


if __name__ == "__main__":
    main()
