"""Charts of a simulation: credit distribution, availability per scope, termination odds.

Rendered with matplotlib (Agg) because reportlab's PNG backend needs the `_renderPM`
extension or pycairo, neither of which installs from wheels on the target machines;
matplotlib writes both PNG and PDF (text stays selectable in the PDF). Output is
byte-stable for the same result: no creation date or software stamp is written.
"""

from __future__ import annotations

import io

import numpy as np

from calculators.simulate.run import SimResult


def render_chart(result: SimResult, fmt: str) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    f = result.figures
    fee = f.fee_cents / 100.0
    credits_pct = f.credits_cents / 100.0 / fee * 100 if fee else np.zeros(result.runs)
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.2), gridspec_kw={"width_ratios": [1.4, 1, 0.8]})
    ax = axes[0]
    ax.hist(credits_pct, bins=40, color="#3b6ea5", edgecolor="white")
    for q, style in ((np.mean(credits_pct), "-"), (np.percentile(credits_pct, 50), "--"),
                     (np.percentile(credits_pct, 95), ":")):
        ax.axvline(q, color="#c0392b", linestyle=style, linewidth=1.2)
    ax.set_title("Credits over the horizon (% of fee)\nmean —, P50 - -, P95 ···", fontsize=10)
    ax.set_xlabel("credit, % of total fee")
    ax.set_ylabel("runs")

    ax = axes[1]
    scopes = list(f.availability)
    if scopes:
        data = [f.availability[s] for s in scopes]
        ax.boxplot(data, whis=(5, 95), showfliers=False)
        ax.set_xticks(range(1, len(scopes) + 1), scopes)
    ax.set_title("Mean availability per run (%)\nbox P25-P75, whiskers P5-P95", fontsize=10)
    ax.set_ylabel("availability %")

    ax = axes[2]
    names = list(f.chronic)
    probs = [float(f.chronic[s].mean()) for s in names]
    ax.bar(names or ["none"], probs or [0.0], color="#7f8c8d")
    ax.set_ylim(0, 1)
    ax.set_title("P(chronic-failure exit fires)", fontsize=10)
    for i, p in enumerate(probs):
        ax.text(i, p + 0.02, f"{p:.0%}", ha="center", fontsize=9)
    fig.suptitle(f"{result.contract}: {result.runs} runs x {len(result.periods)} months, model {result.model.name}, "
                 f"seed {result.seed}", fontsize=11)
    fig.tight_layout()
    buf = io.BytesIO()
    if fmt == "pdf":
        fig.savefig(buf, format="pdf", metadata={"CreationDate": None, "Producer": None, "Creator": None})
    else:
        fig.savefig(buf, format="png", dpi=110, metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()
