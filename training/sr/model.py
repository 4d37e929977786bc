"""The pixelmill-sr network: a compact residual CNN on the luma (Y) channel.

Every convolution runs at the low (input) resolution with *valid* padding; the last layer
predicts ``scale**2`` sub-pixel phases that a pixel shuffle turns into the high-resolution image. A
5x5 linear "skip" convolution, initialised to bicubic interpolation, predicts the same phases, so
the non-linear body only has to learn the residual over (learned) bicubic.

Because the convolutions are valid, an input of ``h x w`` gives an output of
``(h - 2 * margin) * scale x (w - 2 * margin) * scale``: callers pad the input by ``margin`` pixels
(reflect) and tile with a halo of ``margin``, which makes tiled inference exact.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional


def cubic(x: float, a: float = -0.5) -> float:
    """Keys' cubic convolution kernel (a = -0.5, as in PIL and MATLAB's imresize)."""
    x = abs(x)
    if x <= 1:
        return (a + 2) * x**3 - (a + 3) * x**2 + 1
    if x < 2:
        return a * x**3 - 5 * a * x**2 + 8 * a * x - 4 * a
    return 0.0


def bicubic_phase_kernels(scale: int, size: int = 5) -> torch.Tensor:
    """``(scale**2, 1, size, size)`` kernels: phase ``(py, px)`` of bicubic upsampling by ``scale``
    (half-pixel centres), laid out in the order ``pixel_shuffle`` expects."""
    half = size // 2
    taps = []
    for p in range(scale):
        d = (p + 0.5) / scale - 0.5  # LR offset of HR sub-pixel p
        w = [cubic(k - d) for k in range(-half, half + 1)]
        s = sum(w)
        taps.append([v / s for v in w])
    kernels = torch.zeros(scale * scale, 1, size, size)
    for py in range(scale):
        for px in range(scale):
            ky = torch.tensor(taps[py])
            kx = torch.tensor(taps[px])
            kernels[py * scale + px, 0] = ky[:, None] * kx[None, :]
    return kernels


class SRNet(nn.Module):
    def __init__(
        self, scale: int, channels: int = 16, depth: int = 4, head_kernel: int = 5
    ) -> None:
        super().__init__()
        self.scale = scale
        self.channels = channels
        self.depth = depth
        self.head_kernel = head_kernel
        self.head = nn.Conv2d(1, channels, head_kernel)
        self.body = nn.ModuleList(nn.Conv2d(channels, channels, 3) for _ in range(depth))
        self.tail = nn.Conv2d(channels, scale * scale, 3)
        self.skip = nn.Conv2d(1, scale * scale, 5, bias=False)
        # He (fan-in, ReLU) initialisation: PyTorch's default shrinks the signal about 2.4x per
        # layer in a plain ReLU stack, which slows the start of training a lot.
        for conv in [self.head, *self.body, self.tail]:
            nn.init.kaiming_normal_(conv.weight, nonlinearity="relu")
            nn.init.zeros_(conv.bias)
        with torch.no_grad():
            self.skip.weight.copy_(bicubic_phase_kernels(scale, 5))
            # Start the residual branch near zero so training begins from bicubic.
            self.tail.weight.mul_(0.1)
            self.tail.bias.zero_()
        self.margin = (head_kernel - 1) // 2 + depth + 1
        assert self.margin >= 2

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        m = self.margin
        f = functional.relu(self.head(x))
        for conv in self.body:
            f = functional.relu(conv(f))
        r = self.tail(f)
        c = m - 2
        xc = x[:, :, c : x.shape[2] - c, c : x.shape[3] - c] if c > 0 else x
        y = r + self.skip(xc)
        return functional.pixel_shuffle(y, self.scale)

    def macs_per_input_pixel(self) -> int:
        c, s = self.channels, self.scale
        return self.head_kernel**2 * c + self.depth * 9 * c * c + 9 * c * s * s + 25 * s * s

    def param_count(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def config(self) -> dict[str, int]:
        return {
            "scale": self.scale,
            "channels": self.channels,
            "depth": self.depth,
            "head_kernel": self.head_kernel,
            "margin": self.margin,
        }
