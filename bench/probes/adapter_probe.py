"""Backs bench/RESULTS.md, section "Tried on the training part and dropped (2026-11-22, second session; machine busy,
load 6-8)".

Probe: a linear query adapter on MiniLM query vectors, learned from training citation contexts.

    python bench/probes/adapter_probe.py cache bench/out/drafts-train.json      # queries and vectors per draft
    python bench/probes/adapter_probe.py cv                                     # grouped 5-fold CV by paper

The documents' stored vectors stay as they are; only the query vector is mapped (q' = W q, W
384 x 384, initialised to the identity), so a library needs no re-embedding and W ships as a small
file. Trained with a softmax over the draft's own library (the real candidate set), L2 pull to I.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from probe_support import by_draft, drafts  # noqa: E402

CACHE = ROOT / "bench/out/adapter-cache"


def cmd_cache(src: Path) -> None:
    from citefinder.retrieve.agents.dense import dense_text

    CACHE.mkdir(parents=True, exist_ok=True)
    result = json.loads(src.read_text())
    groups = by_draft(result["outcomes"])
    todo = {name for name in groups if not (CACHE / f"{name}.npz").exists()}
    for n, draft in enumerate(drafts(result, only=todo), start=1):
        ids, vecs = [], []
        for i, v in draft.library.iter_vectors():
            ids += i
            vecs.append(v)
        docs = np.concatenate(vecs)
        results = draft.fill()
        dense_q = [dense_text(r.query) for r in results]
        ctx_q = [r.query.window or r.query.text for r in results]
        emb = draft.library.embedder
        qd = np.asarray(emb.encode(dense_q), dtype=np.float32)
        qc = np.asarray(emb.encode(ctx_q), dtype=np.float32)
        outs = draft.outcomes
        gold = np.zeros((len(outs), len(ids)), dtype=bool)
        pos = {d: j for j, d in enumerate(ids)}
        for i, o in enumerate(outs):
            for g in o["gold"] if o["answerable"] else []:
                if g in pos:
                    gold[i, pos[g]] = True
        np.savez(CACHE / f"{draft.name}.npz", ids=np.array(ids), docs=docs, qd=qd, qc=qc, gold=gold,
                 slot_ids=np.array([o["id"] for o in outs]))
        print(f"[{n}/{len(todo)}] {draft.name}: {len(ids)} papers, {len(outs)} slots", file=sys.stderr, flush=True)


def load() -> dict[str, dict[str, np.ndarray]]:
    return {f.stem: dict(np.load(f)) for f in sorted(CACHE.glob("*.npz"))}


def ranks(q: np.ndarray, docs: np.ndarray, gold: np.ndarray) -> list[int]:
    qn = q / np.linalg.norm(q, axis=1, keepdims=True)
    s = qn @ docs.T
    out = []
    for row, g in zip(s, gold):
        if g.any():
            out.append(1 + int((row > row[g].max()).sum()))
    return out


def summary(rs: list[int]) -> str:
    r = np.asarray(rs)
    return f"hit@1 {np.mean(r == 1):.3f} hit@5 {np.mean(r <= 5):.3f} MRR {np.mean(1 / r):.4f} (n={len(r)})"


def train(drafts: list[dict[str, np.ndarray]], key: str, reg: float, epochs: int, lr: float, tau: float) -> np.ndarray:
    import torch

    torch.manual_seed(13)
    dim = drafts[0]["docs"].shape[1]
    W = torch.nn.Parameter(torch.eye(dim))
    opt = torch.optim.Adam([W], lr=lr)
    data = [(torch.from_numpy(d[key][d["gold"].any(1)]), torch.from_numpy(d["docs"]),
             torch.from_numpy(d["gold"][d["gold"].any(1)])) for d in drafts]
    eye = torch.eye(dim)
    for _ in range(epochs):
        opt.zero_grad()
        loss = torch.zeros(())
        count = 0
        for q, docs, gold in data:
            qa = q @ W.T
            qa = qa / qa.norm(dim=1, keepdim=True)
            logits = (qa @ docs.T) / tau
            lse = torch.logsumexp(logits, dim=1)
            pos = torch.logsumexp(logits.masked_fill(~gold, -1e9), dim=1)
            loss = loss + (lse - pos).sum()
            count += len(q)
        loss = loss / count + reg * ((W - eye) ** 2).sum()
        loss.backward()
        opt.step()
    return W.detach().numpy()


def cmd_cv() -> None:
    drafts = load()
    names = sorted(drafts)
    folds = [names[i::5] for i in range(5)]
    for key in ("qd", "qc"):
        base = [r for n in names for r in ranks(drafts[n][key], drafts[n]["docs"], drafts[n]["gold"])]
        print(key, "identity:", summary(base))
        for reg in (0.01, 0.1, 1.0):
            for epochs, lr in ((50, 1e-3), (200, 1e-3)):
                rs = []
                for held in folds:
                    W = train([drafts[n] for n in names if n not in held], key, reg, epochs, lr, 0.05)
                    for n in held:
                        rs += ranks(drafts[n][key] @ W.T, drafts[n]["docs"], drafts[n]["gold"])
                print(f"{key} reg={reg} epochs={epochs} lr={lr}:", summary(rs), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "cache":
        cmd_cache(Path(sys.argv[2]))
    else:
        cmd_cv()
