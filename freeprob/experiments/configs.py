r"""Attention-layer configurations of public models, for ``freeprob verify``.

Each :class:`ModelConfig` records the widths of one attention layer of a public model
(input/model width ``d``, heads ``h``, head widths ``d_K = d_V``, key/value groups), the
sharing scheme of theory.md §3.4–3.5, and where the numbers come from (the model's
configuration file).  The output width is the model width, ``d_O = d`` (the output
projection maps back to the residual stream).

The paper's finite-size check ([HK26]_ §5.1, Table 2, §D.1) uses
``n ≤ d`` tokens with fixed inputs and fan-in Gaussian weights at ``β = 1``.  The nominal
token count of a configuration, :attr:`ModelConfig.n`, is ``min(d, context length,
2048)``; :meth:`ModelConfig.dimensions` gives the sampler's
:class:`~freeprob.sampler.Dimensions` at that ``n`` or at a smaller ``n``, either

* ``widths="scaled"`` (default): every width (``d``, ``d_K``, ``d_V``, ``d_O``) is
  multiplied by the same factor ``s = n/n_nominal`` and rounded, heads unchanged, so the
  width ratios ``γ`` (and the limiting law) stay those of the nominal cell; or
* ``widths="real"``: the model's own widths, only ``n`` smaller (other ratios ``γ``).

A :class:`ModelConfig` is a named catalogue entry (name, label, context, source, note)
around one layer, :attr:`ModelConfig.layer` (the one layer class,
:class:`freeprob.attention.Architecture`, here as the sampler's
:class:`~freeprob.sampler.Dimensions`), which checks the widths and the sharing scheme.
No exact arithmetic is needed (the layer class imports no sympy).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from fractions import Fraction

from freeprob._checks import check_int, describe_int
from freeprob.errors import FreeprobValueError
from freeprob.sampler.spectra import Dimensions

__all__ = ["ModelConfig", "MODEL_CONFIGS", "DEFAULT_CONFIGS", "model_config", "config_identity",
           "parse_scheme", "SCHEME_CHOICES", "Cell"]

_MAX_NOMINAL_N = 2048


@dataclass(frozen=True)
class ModelConfig:
    r"""Widths and sharing of one attention layer of a public model.

    Parameters
    ----------
    name : str
        Short key used on the command line (``gpt2-small``).
    label : str
        Human-readable model name.
    d : int
        Model (input and output) width; ``d_O = d``.
    heads : int
        Query heads ``h``.
    d_head : int
        Per-head width, ``d_K = d_V``.
    context : int
        Maximum sequence length of the model (caps the nominal ``n``).
    scheme : {"independent", "gqa", "shared_keys", "tied"}
    kv_groups : int, optional
        Key/value heads ``h_KV`` for ``scheme="gqa"`` (``1`` is multi-query attention).
    source : str
        Where the numbers come from (model card or configuration file).
    note : str
        Anything not taken from the source (e.g. a tying that the model does not use).

    Attributes
    ----------
    n : int
        The nominal token count ``min(d, context, 2048)``.
    layer : freeprob.sampler.Dimensions
        The layer at the nominal ``n`` (:meth:`dimensions` with no argument).

    Raises
    ------
    FreeprobValueError
        ``d`` or ``context`` not a positive integer; heads, widths, scheme or
        ``kv_groups`` rejected by the layer class (:class:`~freeprob.sampler.Dimensions`).
    """

    name: str
    label: str
    d: int
    heads: int
    d_head: int
    context: int
    scheme: str = "independent"
    kv_groups: int | None = None
    source: str = ""
    note: str = ""
    n: int = field(init=False)
    layer: Dimensions = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        for key in ("d", "context"):       # they fix the nominal n; the layer checks the rest
            check_int(getattr(self, key), f"ModelConfig {self.name!r}", f"`{key}`", minimum=1)
        n = min(self.d, self.context, _MAX_NOMINAL_N)
        object.__setattr__(self, "n", n)
        object.__setattr__(self, "layer", self._layer(n=n, d_k=self.d_head, d_v=self.d_head, d_o=self.d,
                                                      d=self.d, heads=self.heads, scheme=self.scheme,
                                                      kv_groups=self.kv_groups))

    def _layer(self, **sizes) -> Dimensions:
        try:
            return Dimensions(**sizes)
        except FreeprobValueError as exc:
            raise FreeprobValueError(f"configuration {self.name!r}: {exc}") from None

    def scheme_label(self) -> str:
        """``independent``, ``gqa(8)``, ``mqa``, ``shared_keys`` or ``tied``."""
        return _scheme_label(self.scheme, self.kv_groups)

    def sharing(self, scheme: str, kv_groups: int | None = None) -> tuple:
        r"""What a scheme shares in this layer: ``(scheme, kv_groups)`` in a normal form,
        so that schemes that draw the same layer compare equal.

        Parameters
        ----------
        scheme, kv_groups
            As returned by :func:`parse_scheme` (``"gqa"``, 2).

        Returns
        -------
        tuple
            ``("independent", None)`` for GQA with as many groups as heads and, with one
            head, for MQA and ``shared_keys``; else ``(scheme, kv_groups)``.

        Raises
        ------
        Nothing.

        Source: the schemes of :class:`freeprob.attention.Architecture` (theory.md §3.4–3.5).
        """
        if (scheme == "gqa" and kv_groups == self.heads) or (scheme == "shared_keys" and self.heads == 1):
            return "independent", None
        return scheme, kv_groups

    def with_scheme(self, scheme: str, kv_groups: int | None = None) -> "ModelConfig":
        """The same widths under another sharing scheme (name suffixed by the scheme)."""
        if scheme == self.scheme and kv_groups == self.kv_groups:
            return self
        return ModelConfig(name=f"{self.name}/{_scheme_label(scheme, kv_groups)}",
                           label=f"{self.label}, {_scheme_label(scheme, kv_groups)}", d=self.d,
                           heads=self.heads, d_head=self.d_head, context=self.context,
                           scheme=scheme, kv_groups=kv_groups, source=self.source,
                           note=(self.note + "; " if self.note else "")
                           + f"scheme changed to {_scheme_label(scheme, kv_groups)} by the user")

    def dimensions(self, n: int | None = None, *, widths: str = "scaled") -> Dimensions:
        r"""The sampler dimensions of this layer at ``n`` tokens.

        Parameters
        ----------
        n : int, optional
            Tokens, ``1 ≤ n ≤`` the nominal :attr:`n` for ``widths="scaled"`` (or ``≤ d``
            for ``widths="real"``); default the nominal ``n``.
        widths : {"scaled", "real"}
            ``"scaled"``: all widths times ``n/n_nominal``, rounded to integers ``≥ 1``
            (heads unchanged; for tied/GQA the constraints are kept).  ``"real"``: the
            model's widths, ``n`` only.

        Returns
        -------
        freeprob.sampler.Dimensions

        Raises
        ------
        FreeprobValueError
            ``n`` not a positive integer; ``n > d`` (the token rows must be orthogonal in
            ``ℝ^d``) or, scaled, ``n`` above the nominal ``n``; bad ``widths``.
        """
        nom = self.n
        if n is None:
            n = nom
        if isinstance(n, bool) or not isinstance(n, int) or n < 2:    # the message adds the nominal n
            raise FreeprobValueError(f"{self.name}: the token count n must be {describe_int(2)}; got {n!r}"
                                     + (" (the nominal n = min(d, context, 2048))" if n == self.n else ""))
        if widths == "real":
            if n > self.d:
                raise FreeprobValueError(
                    f"{self.name}: n={n} exceeds the model width d={self.d} (orthogonal token rows need "
                    f"n ≤ d)")
            d, dh = self.d, self.d_head
        elif widths == "scaled":
            if n > nom:
                raise FreeprobValueError(
                    f"{self.name}: n={n} exceeds the nominal n={nom} = min(d={self.d}, context="
                    f"{self.context}, {_MAX_NOMINAL_N}); scaled widths only scale down (use "
                    f"--widths real for n ≤ d at the model's own widths)")
            s = Fraction(n, nom)
            d, dh = max(n, round(self.d * s)), max(1, round(self.d_head * s))
        else:
            raise FreeprobValueError(f"{self.name}: widths must be 'scaled' or 'real'; got {widths!r}")
        if n == nom and widths == "scaled":
            return self.layer
        return self._layer(n=n, heads=self.heads, d_k=dh, d_v=dh, d_o=d, d=d, scheme=self.scheme,
                           kv_groups=self.kv_groups)

    def scaled_n(self, max_n: int) -> int:
        r"""The largest ``n ≤ max_n`` at which uniformly scaled widths stay integers.

        ``n = n_nominal/k`` with ``k`` the smallest divisor of
        ``gcd(d, d_head, n_nominal)`` giving ``n ≤ max_n`` (so the width ratios are those
        of the nominal cell exactly); if there is none, ``max_n`` itself (widths then
        rounded, the actual ratios reported).
        """
        if self.n <= max_n:
            return self.n
        g = math.gcd(self.d, self.d_head, self.n)
        for k in range(2, g + 1):
            if g % k == 0 and self.n // k <= max_n:
                return self.n // k
        return max_n

    @classmethod
    def parse(cls, spec: str) -> "ModelConfig":
        r"""A custom configuration from ``"name:d=512,heads=8,d_head=64[,context=..,scheme=..,kv_groups=..]"``.

        Raises
        ------
        FreeprobValueError
            Malformed text, unknown or missing keys, non-integer values, bad widths, or the
            name of a built-in configuration (:data:`MODEL_CONFIGS`).
        """
        m = re.fullmatch(r"\s*([A-Za-z0-9_.\-]+)\s*:(.*)", spec)
        if not m:
            raise FreeprobValueError(
                f"custom configuration {spec!r}: expected 'name:d=512,heads=8,d_head=64' "
                "(optional context=, scheme=, kv_groups=)")
        name, body = m.group(1), m.group(2)
        if name.lower() in MODEL_CONFIGS:         # its cells would be stored and reported as the built-in's
            raise FreeprobValueError(
                f"custom configuration {spec!r}: {name!r} is the name of a built-in configuration; give the "
                f"custom one another name (built-in: {', '.join(MODEL_CONFIGS)})")
        kw = {}
        allowed = ("d", "heads", "d_head", "context", "scheme", "kv_groups")
        given = {}
        for part in filter(None, (p.strip() for p in body.split(","))):
            key, eq, val = part.partition("=")
            key, val = key.strip(), val.strip()
            if not eq or key not in allowed:
                raise FreeprobValueError(
                    f"custom configuration {spec!r}: bad item {part!r}; allowed keys: {', '.join(allowed)}")
            grouped = key == "scheme" and val.lower().startswith(("gqa", "mqa"))       # sets kv_groups too
            sets = [key, "kv_groups"] if grouped else [key]
            for k in sets:                       # a repeated key is refused, not silently the last value
                if k in given:
                    also = "" if k == key else f" ({part} sets kv_groups)"
                    raise FreeprobValueError(
                        f"custom configuration {spec!r}: {k} is given twice ({given[k]} and {part}){also}; "
                        "give each key once")
                given[k] = part
            if key == "scheme":
                kw["scheme"], groups = parse_scheme(val)
                if groups is not None:
                    kw["kv_groups"] = groups
                continue
            try:
                kw[key] = int(val)
            except ValueError:
                raise FreeprobValueError(
                    f"custom configuration {spec!r}: {key} must be an integer; got {val!r}") from None
        missing = [k for k in ("d", "heads", "d_head") if k not in kw]
        if missing:
            raise FreeprobValueError(f"custom configuration {spec!r}: missing {', '.join(missing)}")
        kw.setdefault("context", kw["d"])
        return cls(name=name, label=f"custom {name}", source="user-defined", **kw)


#: Scheme names accepted by :func:`parse_scheme` (``gqa:G`` with ``G`` the KV groups).
SCHEME_CHOICES = ("independent", "gqa:G", "mqa", "shared_keys", "tied")


def parse_scheme(text: str):
    r"""``"gqa:8"`` → ``("gqa", 8)``, ``"mqa"`` → ``("gqa", 1)``, ``"tied"`` → ``("tied", None)``.

    Raises
    ------
    FreeprobValueError
        Unknown scheme (the allowed ones are listed) or a bad group count.
    """
    t = text.strip().lower()
    if t == "mqa":
        return "gqa", 1
    if t.startswith("gqa"):
        _, sep, g = t.partition(":")
        try:
            groups = int(g)
        except ValueError:
            groups = 0
        if not sep or groups <= 0:
            raise FreeprobValueError(f"scheme {text!r}: write gqa:G with G ≥ 1 key/value groups (e.g. gqa:8)")
        return "gqa", groups
    if t in ("independent", "shared_keys", "tied"):
        return t, None
    raise FreeprobValueError(f"unknown scheme {text!r}; allowed: {', '.join(SCHEME_CHOICES)}")


def _scheme_label(scheme, kv_groups):
    if scheme == "gqa":
        return "mqa" if kv_groups == 1 else f"gqa({kv_groups})"
    return scheme


_HF = "https://huggingface.co/{}/blob/main/config.json"

#: The public-model table of ``freeprob verify`` (name → :class:`ModelConfig`).
MODEL_CONFIGS = {c.name: c for c in (
    ModelConfig("gpt2-small", "GPT-2 small", d=768, heads=12, d_head=64, context=1024,
                source=_HF.format("openai-community/gpt2") + " (n_embd=768, n_head=12, n_ctx=1024); "
                "Radford et al. 2019"),
    ModelConfig("gpt2-medium", "GPT-2 medium", d=1024, heads=16, d_head=64, context=1024,
                source=_HF.format("openai-community/gpt2-medium") + " (n_embd=1024, n_head=16, n_ctx=1024)"),
    ModelConfig("bert-base", "BERT-base", d=768, heads=12, d_head=64, context=512,
                source=_HF.format("google-bert/bert-base-uncased")
                + " (hidden_size=768, num_attention_heads=12, max_position_embeddings=512); Devlin et al. 2019"),
    ModelConfig("llama2-7b", "LLaMA-2-7B", d=4096, heads=32, d_head=128, context=4096,
                source=_HF.format("meta-llama/Llama-2-7b-hf")
                + " (hidden_size=4096, num_attention_heads=32, num_key_value_heads=32, "
                "max_position_embeddings=4096); Touvron et al. 2023"),
    ModelConfig("mistral-7b", "Mistral-7B (GQA, 8 KV groups)", d=4096, heads=32, d_head=128,
                context=32768, scheme="gqa", kv_groups=8,
                source=_HF.format("mistralai/Mistral-7B-v0.1")
                + " (hidden_size=4096, num_attention_heads=32, num_key_value_heads=8, head_dim=128); "
                "Jiang et al. 2023"),
    ModelConfig("falcon-7b", "Falcon-7B (multi-query)", d=4544, heads=71, d_head=64, context=2048,
                scheme="gqa", kv_groups=1,
                source=_HF.format("tiiuae/falcon-7b") + " (hidden_size=4544, n_head=71, multi_query=true)"),
    ModelConfig("gpt2-small-tied", "GPT-2 small, tied W_V = W_K", d=768, heads=12, d_head=64,
                context=1024, scheme="tied",
                source=_HF.format("openai-community/gpt2") + " (widths)",
                note="GPT-2 does not tie W_V = W_K; the tying is the paper's within-head sharing "
                     "(§3, docs/theory.md §3.4) at GPT-2 small widths"),
)}

#: The seven configurations of the default ``freeprob verify`` run.
DEFAULT_CONFIGS = tuple(MODEL_CONFIGS)


def config_identity(name):
    r"""The identity of a configuration as written in a list (``--configs``): what two
    entries must not share, compared before anything is run or created.

    Parameters
    ----------
    name : str
        A built-in name (any case: ``GPT2-small`` is ``gpt2-small``) or a custom
        ``"name:d=..,heads=..,d_head=.."`` (its name; two custom configurations with one
        name would be stored and reported under that name).

    Returns
    -------
    str
        The case-folded configuration name (a value that is not a string: itself).

    Raises
    ------
    Nothing (a malformed entry is reported by :func:`model_config`).

    Source: this module.

    >>> config_identity("GPT2-small") == config_identity("gpt2-small")
    True
    >>> config_identity("a:d=64,heads=2,d_head=16") == config_identity("A:d=128,heads=2,d_head=32")
    True
    """
    if not isinstance(name, str):
        return name
    m = re.fullmatch(r"\s*([A-Za-z0-9_.\-]+)\s*:.*", name, re.S)
    return (m.group(1) if m else name.strip()).casefold()


def model_config(name: str) -> ModelConfig:
    r"""The configuration called ``name`` (a key of :data:`MODEL_CONFIGS`), or a custom
    one written ``"name:d=..,heads=..,d_head=.."`` (see :meth:`ModelConfig.parse`).

    Raises
    ------
    FreeprobValueError
        Unknown name; the message lists the known ones.
    """
    if not isinstance(name, str):
        raise FreeprobValueError(f"configuration names are strings; got {name!r}")
    if ":" in name:
        return ModelConfig.parse(name)
    try:
        return MODEL_CONFIGS[name.strip().lower()]
    except KeyError:
        raise FreeprobValueError(
            f"unknown configuration {name!r}; known: {', '.join(MODEL_CONFIGS)} "
            "(or a custom 'name:d=512,heads=8,d_head=64')") from None


@dataclass(frozen=True)
class Cell:
    """One configuration at one token count: its dimensions and how they were obtained."""

    config: ModelConfig
    dims: Dimensions
    widths: str

    @property
    def scale(self) -> Fraction:
        """``n / n_nominal`` (1 when nothing was scaled)."""
        return Fraction(self.dims.n, self.config.n)

    @property
    def exact_ratios(self) -> bool:
        """True when the width ratios equal those of the nominal cell (no rounding)."""
        nom = self.config.dimensions()
        return (self.dims.gamma_k, self.dims.gamma_v, self.dims.gamma_o) == (nom.gamma_k, nom.gamma_v,
                                                                             nom.gamma_o)

    def describe(self) -> str:
        """E.g. ``n=1024,h=32,dK=64,dV=64,dO=2048 (scaled ×1/2 from n=2048, d_K=128)``."""
        dm = self.dims
        s = f"n={dm.n},h={dm.heads},dK={dm.d_k},dV={dm.d_v},dO={dm.d_o}"
        if self.widths == "scaled" and self.scale != 1:
            s += (f" (widths scaled ×{self.scale} from n={self.config.n}, d_K={self.config.d_head}, "
                  f"d_O={self.config.d}" + (")" if self.exact_ratios else ", rounded: other ratios)"))
        elif self.widths == "real" and dm.n != self.config.n:
            s += " (model widths, fewer tokens)"
        return s
