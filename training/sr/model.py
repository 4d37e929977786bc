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


class RepConv3x3(nn.Module):
    """A *valid* 3x3 convolution C -> C trained as several parallel branches that fold into one
    plain 3x3 convolution for inference (structural re-parameterisation, as in RepVGG and
    ECBSR): the plain 3x3, a 1x1 expansion followed by a 3x3, 1x1 convolutions followed by fixed
    Sobel-x / Sobel-y / Laplacian filters with learned per-channel scales, and the identity
    (the centre of the input). Every branch is linear, so their sum is one 3x3 convolution;
    the extra branches change how training moves through weight space, not what the deployed
    network computes or costs. ``fused()`` returns that convolution's weight and bias.

    The extra branches start at zero, so a block initialised from a plain convolution computes
    exactly what that convolution did."""

    def __init__(self, channels: int, expand: int = 2) -> None:
        super().__init__()
        c, e = channels, channels * expand
        self.conv = nn.Conv2d(c, c, 3)
        self.exp1 = nn.Conv2d(c, e, 1)
        self.exp3 = nn.Conv2d(e, c, 3)
        nn.init.zeros_(self.exp3.weight)
        nn.init.zeros_(self.exp3.bias)
        sobel_x = torch.tensor([[1.0, 0.0, -1.0], [2.0, 0.0, -2.0], [1.0, 0.0, -1.0]])
        laplace = torch.tensor([[0.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.0, 1.0, 0.0]])
        self.register_buffer("masks", torch.stack([sobel_x, sobel_x.T, laplace]))
        self.edge1 = nn.ModuleList(nn.Conv2d(c, c, 1) for _ in range(3))
        self.edge_scale = nn.Parameter(torch.zeros(3, c))
        self.edge_bias = nn.Parameter(torch.zeros(3, c))
        self.identity = nn.Parameter(torch.zeros(c))
        self.channels = c

    def fused(self) -> tuple[torch.Tensor, torch.Tensor]:
        c = self.channels
        w = self.conv.weight.clone()
        b = self.conv.bias.clone()
        # 1x1 (C -> E) then 3x3 (E -> C): W[o, i] = sum_e W3[o, e] * W1[e, i]; the 1x1 bias
        # passes through every tap of the 3x3 (valid padding: no zeros enter).
        w1 = self.exp1.weight[:, :, 0, 0]
        w = w + torch.einsum("oekl,ei->oikl", self.exp3.weight, w1)
        b = b + self.exp3.bias + torch.einsum("oekl,e->o", self.exp3.weight, self.exp1.bias)
        masks: torch.Tensor = self.masks  # type: ignore[assignment]
        for k, conv1 in enumerate(self.edge1):
            # 1x1 (C -> C), then the fixed mask per channel times a learned scale, plus a bias.
            m = masks[k]
            s = self.edge_scale[k]
            w = w + (s[:, None] * conv1.weight[:, :, 0, 0])[:, :, None, None] * m
            b = b + s * conv1.bias * m.sum() + self.edge_bias[k]
        w = w.clone()
        idx = torch.arange(c)
        w[idx, idx, 1, 1] = w[idx, idx, 1, 1] + self.identity
        return w, b

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training:
            w, b = self.fused()
            return functional.conv2d(x, w, b)
        masks: torch.Tensor = self.masks  # type: ignore[assignment]
        c = self.channels
        y = self.conv(x) + self.exp3(self.exp1(x))
        for k, conv1 in enumerate(self.edge1):
            t = conv1(x)
            kern = (self.edge_scale[k][:, None, None] * masks[k]).unsqueeze(1)
            y = y + functional.conv2d(t, kern, self.edge_bias[k], groups=c)
        return y + self.identity[None, :, None, None] * x[:, :, 1:-1, 1:-1]


class SRNet(nn.Module):
    def __init__(
        self,
        scale: int,
        channels: int = 16,
        depth: int = 4,
        head_kernel: int = 5,
        rep: bool = False,
        context: int = 0,
    ) -> None:
        super().__init__()
        self.scale = scale
        self.context = context
        self.channels = channels
        self.depth = depth
        self.head_kernel = head_kernel
        self.rep = rep
        self.head = nn.Conv2d(1, channels, head_kernel)
        self.body = nn.ModuleList(
            RepConv3x3(channels) if rep else nn.Conv2d(channels, channels, 3) for _ in range(depth)
        )
        self.tail = nn.Conv2d(channels, scale * scale, 3)
        self.skip = nn.Conv2d(1, scale * scale, 5, bias=False)
        # Context (``context`` > 0): image-wide statistics (``pixelmill.engines.upscale.context``)
        # -> one gain per channel of every body layer, 2 * sigmoid(.), so 1 at the start: the
        # last layer starts at zero and a network continued from a plain export computes
        # exactly what it did.
        self.ctx: nn.Sequential | None = None
        if context:
            hidden = 32
            self.ctx = nn.Sequential(
                nn.Linear(context, hidden), nn.ReLU(), nn.Linear(hidden, depth * channels)
            )
            last = self.ctx[2]
            assert isinstance(last, nn.Linear)
            nn.init.zeros_(last.weight)
            nn.init.zeros_(last.bias)
        # He (fan-in, ReLU) initialisation: PyTorch's default shrinks the signal about 2.4x per
        # layer in a plain ReLU stack, which slows the start of training a lot.
        plain = [b.conv if isinstance(b, RepConv3x3) else b for b in self.body]
        for conv in [self.head, *plain, self.tail]:
            nn.init.kaiming_normal_(conv.weight, nonlinearity="relu")
            nn.init.zeros_(conv.bias)
        with torch.no_grad():
            self.skip.weight.copy_(bicubic_phase_kernels(scale, 5))
            # Start the residual branch near zero so training begins from bicubic.
            self.tail.weight.mul_(0.1)
            self.tail.bias.zero_()
        self.margin = (head_kernel - 1) // 2 + depth + 1
        assert self.margin >= 2

    def forward(self, x: torch.Tensor, stats: torch.Tensor | None = None) -> torch.Tensor:
        m = self.margin
        f = functional.relu(self.head(x))
        gains = None
        if self.ctx is not None:
            assert stats is not None, "a context network needs the image statistics"
            gains = 2.0 * torch.sigmoid(self.ctx(stats)).view(-1, self.depth, self.channels)
        for k, conv in enumerate(self.body):
            f = functional.relu(conv(f))
            if gains is not None:
                f = f * gains[:, k, :, None, None]
        r = self.tail(f)
        c = m - 2
        xc = x[:, :, c : x.shape[2] - c, c : x.shape[3] - c] if c > 0 else x
        y = r + self.skip(xc)
        return functional.pixel_shuffle(y, self.scale)

    def plain(self) -> SRNet:
        """The deployable network: every re-parameterised block folded into a plain 3x3."""
        net = SRNet(
            self.scale, self.channels, self.depth, self.head_kernel, rep=False, context=self.context
        )
        state = {k: v for k, v in self.state_dict().items() if not k.startswith("body.")}
        with torch.no_grad():
            for i, block in enumerate(self.body):
                if isinstance(block, RepConv3x3):
                    w, b = block.fused()
                else:
                    w, b = block.weight, block.bias
                state[f"body.{i}.weight"] = w.detach().clone()
                state[f"body.{i}.bias"] = b.detach().clone()
        net.load_state_dict(state)
        return net.eval()

    def load_plain(self, state: dict[str, torch.Tensor]) -> None:
        """Load a plain network's weights (a ``plain()`` state or an exported ONNX model's
        initialisers); re-parameterised blocks put them in their 3x3 branch, others at zero."""
        mapped = {}
        for k, v in state.items():
            if self.rep and k.startswith("body."):
                i, leaf = k.split(".")[1:]
                mapped[f"body.{i}.conv.{leaf}"] = v
            else:
                mapped[k] = v
        mapped = self._widen(mapped)
        missing, unexpected = self.load_state_dict(mapped, strict=False)
        assert not unexpected, unexpected
        # Body layers the source network did not have (a deeper network continuing from a
        # shallower one) start as the identity: their input is the output of a ReLU, so a
        # centre-tap identity followed by ReLU passes it on unchanged, and the deeper network
        # computes exactly what the source did before training moves it.
        new_layers = sorted({int(k.split(".")[1]) for k in missing if k.startswith("body.")})
        with torch.no_grad():
            for i in new_layers:
                block = self.body[i]
                conv = block.conv if isinstance(block, RepConv3x3) else block
                assert isinstance(conv, nn.Conv2d)
                conv.weight.zero_()
                conv.bias.zero_()
                idx = torch.arange(self.channels)
                conv.weight[idx, idx, 1, 1] = 1.0
        # A context head the source did not have keeps its initialisation (gains of exactly 1).
        rest = [k for k in missing if not k.startswith(("body.", "ctx."))]
        assert not rest, rest

    def _widen(self, mapped: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """A source network with fewer channels (a wider network continuing from a narrower
        one): its weights fill the first channels; the new channels keep their fresh (He)
        incoming weights, and every weight *from* a new channel into an old one (or into the
        tail) is zero, so the wider network computes exactly what the source did and training
        grows the new channels from there (gradients reach the zero weights because the new
        channels' activations are not zero)."""
        own = self.state_dict()
        out: dict[str, torch.Tensor] = {}
        for k, v in mapped.items():
            target = own.get(k)
            if target is None or target.shape == v.shape:
                out[k] = v
                continue
            w = target.detach().clone()
            if w.dim() == 4:
                o, i = v.shape[0], v.shape[1]
                w[:, i:] = 0.0  # from new channels: zero (exact start)
                w[:o, :i] = v
            else:
                w[: v.shape[0]] = v
            out[k] = w
        return out

    def macs_per_input_pixel(self) -> int:
        c, s = self.channels, self.scale
        # The context head runs once per image, not per pixel (its gains cost one multiply per
        # feature value, counted here with the body).
        return (
            self.head_kernel**2 * c
            + self.depth * c * (1 if self.context else 0)
            + self.depth * 9 * c * c
            + 9 * c * s * s
            + 25 * s * s
        )

    def param_count(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def config(self) -> dict[str, int]:
        return shape_config(self)


class MixConv(nn.Module):
    """``experts`` kernels of one *valid* convolution, mixed per sample by weights ``alpha``
    (``(B, experts)``, rows summing to 1): sample ``b`` is convolved with ``sum_k alpha[b, k] W_k``
    (a conditionally parameterised convolution, as in CondConv). For one image the mix is one
    plain convolution, so the deployed network costs what a single expert does."""

    def __init__(self, experts: int, out_c: int, in_c: int, kernel: int, bias: bool = True):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(experts, out_c, in_c, kernel, kernel))
        self.bias = nn.Parameter(torch.zeros(experts, out_c)) if bias else None

    def mixed(self, alpha: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """``(B, O, I, k, k)`` weights and ``(B, O)`` biases (or None) for the mixes ``alpha``."""
        w = torch.einsum("bk,koihw->boihw", alpha, self.weight)
        b = alpha @ self.bias if self.bias is not None else None
        return w, b


def conv_per_sample(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None) -> torch.Tensor:
    """Valid convolution of each sample of ``x`` (B, I, H, W) with its own weights ``w``
    (B, O, I, k, k) and biases ``b`` (B, O): one grouped convolution over the batch."""
    n, c, h, wd = x.shape
    if n == 1:  # one image (the ONNX export): a plain convolution
        return functional.conv2d(x, w[0], None if b is None else b[0])
    o = w.shape[1]
    y = functional.conv2d(
        x.reshape(1, n * c, h, wd),
        w.reshape(n * o, c, w.shape[3], w.shape[4]),
        None if b is None else b.reshape(-1),
        groups=n,
    )
    return y.reshape(n, o, y.shape[2], y.shape[3])


class MixSRNet(nn.Module):
    """:class:`SRNet` with image context whose every convolution (head, body, tail, skip) is a
    mix of ``experts`` kernels; a small router turns the image statistics into the mixing
    weights (softmax), next to the context head's per-channel gains. Nothing is classified or
    switched: each image gets one network, a continuous blend, and the engine folds the blend
    (and the gains) into constant weights per image exactly as it does for the gains alone
    (``weights_for``; ``export.py`` writes the context and plain graphs), so inference costs
    what one :class:`SRNet` of the same shape costs. More parameters, same arithmetic: the
    blend can give clean inputs sharper kernels and aliased inputs safer ones, which one set of
    kernels with per-channel gains could only trade against each other."""

    def __init__(
        self,
        scale: int,
        channels: int,
        depth: int,
        head_kernel: int,
        context: int,
        experts: int,
    ) -> None:
        super().__init__()
        assert context > 0, "the router reads the image statistics"
        self.scale, self.channels, self.depth = scale, channels, depth
        self.head_kernel, self.context, self.experts = head_kernel, context, experts
        c, s = channels, scale
        self.head = MixConv(experts, c, 1, head_kernel)
        self.body = nn.ModuleList(MixConv(experts, c, c, 3) for _ in range(depth))
        self.tail = MixConv(experts, s * s, c, 3)
        self.skip = MixConv(experts, s * s, 1, 5, bias=False)
        hidden = 32
        self.ctx = nn.Sequential(
            nn.Linear(context, hidden), nn.ReLU(), nn.Linear(hidden, depth * c)
        )
        self.router = nn.Sequential(nn.Linear(context, 16), nn.ReLU(), nn.Linear(16, experts))
        self.margin = (head_kernel - 1) // 2 + depth + 1

    def layers(self) -> list[tuple[str, MixConv]]:
        return [
            ("head", self.head),
            *((f"body.{k}", conv) for k, conv in enumerate(self.body)),
            ("tail", self.tail),
            ("skip", self.skip),
        ]

    @classmethod
    def from_plain(cls, net: SRNet, experts: int) -> MixSRNet:
        """Every expert a copy of ``net`` (a context :class:`SRNet`), so the mix computes exactly
        what ``net`` did for any routing (``centre_router`` then spreads the routing)."""
        mix = cls(net.scale, net.channels, net.depth, net.head_kernel, net.context, experts)
        src = net.plain().state_dict()
        with torch.no_grad():
            for name, conv in mix.layers():
                conv.weight.copy_(src[f"{name}.weight"][None].expand_as(conv.weight))
                if conv.bias is not None:
                    conv.bias.copy_(src[f"{name}.bias"][None].expand_as(conv.bias))
            mix.ctx.load_state_dict(net.ctx.state_dict() if net.ctx is not None else {})
        return mix

    def load_narrower(self, state: dict[str, torch.Tensor], channels: int, depth: int) -> None:
        """Continue from an exported mixture with the same experts and at most as many channels
        and body layers (a `high` network grown from a `balanced` one). Each expert is widened
        as :meth:`SRNet.load_plain` widens a plain network: old weights fill the first channels,
        weights from new channels into old ones (and into the tail) are zero, new channels keep
        their fresh incoming weights, new body layers (at the end) start as the identity. The
        context head's gains are laid out ``(depth, channels)``: old rows go to their layer and
        channel, new rows start at zero (a gain of exactly 1). The router is kept. The wider,
        deeper mixture computes exactly what the source did until training moves it."""
        assert channels <= self.channels
        assert depth <= self.depth
        with torch.no_grad():
            for name, conv in self.layers():
                if f"{name}.weight" not in state:  # a new body layer: the identity
                    conv.weight.zero_()
                    assert conv.bias is not None
                    conv.bias.zero_()
                    idx = torch.arange(self.channels)
                    conv.weight[:, idx, idx, 1, 1] = 1.0
                    continue
                v = state[f"{name}.weight"]
                o, i = v.shape[1], v.shape[2]
                conv.weight[:, :, i:] = 0.0
                conv.weight[:, :o, :i] = v
                if conv.bias is not None:
                    conv.bias[:, :o] = state[f"{name}.bias"]
            first, last = self.ctx[0], self.ctx[2]
            assert isinstance(first, nn.Linear)
            assert isinstance(last, nn.Linear)
            first.weight.copy_(state["ctx.0.weight"])
            first.bias.copy_(state["ctx.0.bias"])
            w_old = state["ctx.2.weight"].view(depth, channels, -1)
            b_old = state["ctx.2.bias"].view(depth, channels)
            w = torch.zeros(self.depth, self.channels, w_old.shape[2])
            b = torch.zeros(self.depth, self.channels)
            w[:depth, :channels] = w_old
            b[:depth, :channels] = b_old
            last.weight.copy_(w.view(self.depth * self.channels, -1))
            last.bias.copy_(b.view(-1))
            for k, v in state.items():
                if k.startswith("router."):
                    self.get_parameter(k).copy_(v)

    def centre_router(self, stats: torch.Tensor, spread: float) -> None:
        """Data-dependent start for the router: over the statistics ``stats`` of a sample of
        training patches, each expert's logit gets mean 0 and standard deviation ``spread``,
        so the mix is even on average and varies between inputs from the first step (a scaled
        random layer alone either hardly varies or saturates on one expert)."""
        last = self.router[2]
        assert isinstance(last, nn.Linear)
        with torch.no_grad():
            hidden = self.router[1](self.router[0](stats))
            logits = last(hidden)
            scale = spread / logits.std(dim=0).clamp_min(1e-6)
            last.weight.mul_(scale[:, None])
            last.bias.copy_(last.bias * scale - logits.mean(dim=0) * scale)

    def routing(self, stats: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Mixing weights ``(B, experts)`` and gains ``(B, depth, channels)``."""
        alpha = torch.softmax(self.router(stats), dim=1)
        gains = 2.0 * torch.sigmoid(self.ctx(stats)).view(-1, self.depth, self.channels)
        return alpha, gains

    def weights_for(self, stats: torch.Tensor) -> dict[str, torch.Tensor]:
        """The plain :class:`SRNet` weights (no context) one image with ``stats`` (1, STATS)
        gets: the experts blended, each body layer's gains folded in
        (``g * relu(W x + b) = relu((g W) x + g b)``, gains being positive)."""
        alpha, gains = self.routing(stats)
        out: dict[str, torch.Tensor] = {}
        for name, conv in self.layers():
            w, b = conv.mixed(alpha)
            w, b = w[0], None if b is None else b[0]
            if name.startswith("body."):
                g = gains[0, int(name.split(".")[1])]
                w, b = w * g[:, None, None, None], None if b is None else b * g
            out[f"{name}.weight"] = w
            if b is not None:
                out[f"{name}.bias"] = b
        return out

    def forward(self, x: torch.Tensor, stats: torch.Tensor) -> torch.Tensor:
        alpha, gains = self.routing(stats)
        w, b = self.head.mixed(alpha)
        f = functional.relu(conv_per_sample(x, w, b))
        for k, conv in enumerate(self.body):
            w, b = conv.mixed(alpha)
            f = functional.relu(conv_per_sample(f, w, b)) * gains[:, k, :, None, None]
        w, b = self.tail.mixed(alpha)
        r = conv_per_sample(f, w, b)
        c = self.margin - 2
        xc = x[:, :, c : x.shape[2] - c, c : x.shape[3] - c] if c > 0 else x
        w, _ = self.skip.mixed(alpha)
        y = r + conv_per_sample(xc, w, None)
        return functional.pixel_shuffle(y, self.scale)

    def macs_per_input_pixel(self) -> int:
        c, s = self.channels, self.scale
        # Folded per image: one network of the plain shape (the mix and the gains cost nothing
        # per pixel).
        return self.head_kernel**2 * c + self.depth * 9 * c * c + 9 * c * s * s + 25 * s * s

    def param_count(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def config(self) -> dict[str, int]:
        return {**shape_config(self), "experts": self.experts}


def shape_config(net: SRNet | MixSRNet) -> dict[str, int]:
    """What an export records as ``pixelmill_config`` (the engine reads margin and context)."""
    return {
        "scale": net.scale,
        "channels": net.channels,
        "depth": net.depth,
        "head_kernel": net.head_kernel,
        "margin": net.margin,
        "context": net.context,
    }
