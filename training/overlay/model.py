"""pixelmill-overlay: a compact U-Net that predicts, per pixel, the overlay's alpha and colour
(so semi-transparent overlays can be unmixed exactly) and a fill colour for opaque pixels.

Input: RGB in [0, 1], (N, 3, H, W) with H and W multiples of 8. Output (N, 7 or 8, H, W):
channel 0 alpha, 1-3 overlay colour, 4-6 fill (the clean photo's colour under opaque strokes),
7 (with ``outputs=8``) coverage: where the overlay is (its anti-aliased glyph coverage, 0..1),
whatever its opacity - opacity and colour are then fitted per image (``fit.py``); all after a
sigmoid. Four scales (1, 1/2, 1/4, 1/8; strided 3x3 convolutions down, nearest
upsampling + 3x3 convolution on the concatenated skip up), ReLU, no normalisation.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional

THRESHOLD = 0.8
"""Alpha at or above which a pixel counts as opaque (filled, not unmixed)."""


def conv(cin: int, cout: int, stride: int = 1) -> nn.Conv2d:
    c = nn.Conv2d(cin, cout, 3, stride, 1)
    nn.init.kaiming_normal_(c.weight, nonlinearity="relu")
    nn.init.zeros_(c.bias)
    return c


class OverlayNet(nn.Module):
    def __init__(
        self, widths: tuple[int, int, int, int] = (16, 24, 32, 48), outputs: int = 7
    ) -> None:
        super().__init__()
        w0, w1, w2, w3 = widths
        self.widths = widths
        self.outputs = outputs
        self.e0 = conv(3, w0)
        self.d1 = nn.ModuleList([conv(w0, w1, 2), conv(w1, w1)])
        self.d2 = nn.ModuleList([conv(w1, w2, 2), conv(w2, w2)])
        self.d3 = nn.ModuleList([conv(w2, w3, 2), conv(w3, w3), conv(w3, w3)])
        self.u2 = conv(w3 + w2, w2)
        self.u1 = conv(w2 + w1, w1)
        self.u0 = conv(w1 + w0, w0)
        self.head = nn.Conv2d(w0, outputs, 1)
        nn.init.normal_(self.head.weight, std=0.01)
        with torch.no_grad():
            self.head.bias.zero_()
            self.head.bias[0] = -4.0  # start with "no overlay"
            if outputs > 7:
                self.head.bias[7] = -4.0

    @staticmethod
    def _seq(layers: nn.ModuleList, x: torch.Tensor) -> torch.Tensor:
        for layer in layers:
            x = functional.relu(layer(x))
        return x

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.logits(x))

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        """The head's output before the sigmoid (training uses it for a stable alpha loss)."""
        f0 = functional.relu(self.e0(x - 0.5))
        f1 = self._seq(self.d1, f0)
        f2 = self._seq(self.d2, f1)
        f3 = self._seq(self.d3, f2)
        up = functional.interpolate(f3, scale_factor=2.0, mode="nearest")
        g2 = functional.relu(self.u2(torch.cat([up, f2], 1)))
        up = functional.interpolate(g2, scale_factor=2.0, mode="nearest")
        g1 = functional.relu(self.u1(torch.cat([up, f1], 1)))
        up = functional.interpolate(g1, scale_factor=2.0, mode="nearest")
        g0 = functional.relu(self.u0(torch.cat([up, f0], 1)))
        return self.head(g0)

    def param_count(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def macs_per_pixel(self) -> float:
        total = 0.0
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                k = m.kernel_size[0] * m.kernel_size[1] * m.in_channels * m.out_channels
                total += k / {1: 1, 2: 4}.get(m.stride[0], 1) * self._scale_of(m)
        return total

    def _scale_of(self, m: nn.Conv2d) -> float:
        # fraction of full-resolution pixels at the layer's *input*
        for name, mod in self.named_modules():
            if mod is m:
                if name.startswith("d1"):
                    return 1.0 if name.endswith("0") else 0.25
                if name.startswith("d2"):
                    return 0.25 if name.endswith("0") else 1 / 16
                if name.startswith("d3"):
                    return 1 / 16 if name.endswith("0") else 1 / 64
                if name == "u2":
                    return 1 / 16
                if name == "u1":
                    return 0.25
        return 1.0

    @classmethod
    def from_config(cls, cfg: dict[str, object]) -> OverlayNet:
        """The network a checkpoint's or an export's ``config()`` describes."""
        widths = cfg["widths"]
        assert isinstance(widths, list)
        outputs = cfg.get("outputs", 7)
        assert isinstance(outputs, int)
        return cls(tuple(widths), outputs)  # type: ignore[arg-type]

    def config(self) -> dict[str, object]:
        return {
            "widths": list(self.widths),
            "threshold": THRESHOLD,
            "multiple": 8,
            "outputs": self.outputs,
        }


def unmix(
    obs: torch.Tensor, alpha: torch.Tensor, colour: torch.Tensor, threshold: float = THRESHOLD
) -> torch.Tensor:
    """clean = (obs - a * colour) / (1 - a), with a clamped below the threshold."""
    a = alpha.clamp(0.0, threshold)
    return ((obs - a * colour) / (1.0 - a)).clamp(0.0, 1.0)
