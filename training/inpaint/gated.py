"""pixelmill-inpaint: a compact gated-convolution network that fills opaque overlay strokes.

Input (N, 4, H, W), H and W multiples of 4: a first fill of the image (OpenCV Telea over the
mask, RGB in [0, 1]) and the mask (1 = fill). Output (N, 3, H, W): the first fill plus a
learned correction inside the mask; outside it the input comes back unchanged. Every layer is a
*gated* convolution (Yu et al., "Free-Form Image Inpainting with Gated Convolution", ICCV 2019):
one convolution gives features and a gate, ``relu(features) * sigmoid(gate)``, so the network
learns per pixel and channel how much to trust what it sees - the masked pixels, the first
fill, overlay fringes left around the mask. Three scales (1, 1/2, 1/4; strided convolutions
down, nearest upsampling + gated convolution on the concatenated skip up) and dilated
convolutions (2, 4, 8) at 1/4 for reach: the receptive field is about 150 px, enough for
caption strokes up to ~20 px wide.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional

MULTIPLE = 4
"""Height and width must be multiples of this (two stride-2 convolutions)."""


class Gated(nn.Module):
    def __init__(self, cin: int, cout: int, k: int = 3, stride: int = 1, dilation: int = 1):
        super().__init__()
        self.cout = cout
        self.conv = nn.Conv2d(cin, 2 * cout, k, stride, dilation * (k // 2), dilation)
        nn.init.kaiming_normal_(self.conv.weight, nonlinearity="relu")
        nn.init.zeros_(self.conv.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        f, g = torch.split(self.conv(x), self.cout, dim=1)
        return functional.relu(f) * torch.sigmoid(g)


class InpaintNet(nn.Module):
    def __init__(self, widths: tuple[int, int, int] = (24, 32, 48), out_width: int = 16) -> None:
        super().__init__()
        w0, w1, w2 = widths
        self.widths = widths
        self.out_width = out_width
        self.e0 = Gated(4, w0, 5)
        self.e1 = nn.Sequential(Gated(w0, w1, stride=2), Gated(w1, w1))
        self.e2 = Gated(w1, w2, stride=2)
        self.mid = nn.Sequential(
            Gated(w2, w2, dilation=2),
            Gated(w2, w2, dilation=4),
            Gated(w2, w2, dilation=8),
            Gated(w2, w2),
        )
        self.u1 = Gated(w2 + w1, w1)
        self.u0 = Gated(w1 + w0, out_width)
        self.head = nn.Conv2d(out_width, 3, 3, 1, 1)
        nn.init.normal_(self.head.weight, std=1e-3)
        nn.init.zeros_(self.head.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        first, mask = x[:, :3], x[:, 3:4]
        a = self.e0(torch.cat([first - 0.5, mask], dim=1))
        b = self.e1(a)
        c = self.mid(self.e2(b))
        up = functional.interpolate(c, scale_factor=2.0, mode="nearest")
        b = self.u1(torch.cat([up, b], dim=1))
        up = functional.interpolate(b, scale_factor=2.0, mode="nearest")
        a = self.u0(torch.cat([up, a], dim=1))
        return torch.clamp(first + mask * self.head(a), 0.0, 1.0)


def parameters(net: nn.Module) -> int:
    return sum(p.numel() for p in net.parameters())
