"""Train the query encoder and the cross-encoder of issue 28 in one run (GPU where lent; runs on CPU too).

    python bench/train28/gpu_train.py --model .gpu/minilm16 --data .gpu/data.json.xz --out OUT [--smoke]

The third call (``--cross-only --epochs 2 --mix 4,2,1``) trains only the cross-encoder, longer and with more of
the same citing paper's references among its negatives, scoring it after each epoch on the validation part and on
drafts-dev's training part (each slot against its paper's own .bib: rank and pair AUC) and keeping each epoch's
weights (``cross-long-e1-*.safetensors``, ``cross-long-*.safetensors``); ``--shipped-cross FOLDER`` scores a
shipped one first.

Needs torch, transformers, tokenizers and safetensors only (what the GPU machine's python3 has). Reads the
file bench/train28/build_data.py writes and all-MiniLM-L6-v2 (any dtype; trained in fp32 with bf16
autocast on CUDA). Writes ``OUT/results.json`` (every figure, per stage as it finishes) and the weights:

- ``qenc.safetensors``: the query tower's trained layers (fp16): only the top layers learn, the document
  side is the frozen base model, so every library's stored vectors stay valid;
- ``cross-1.safetensors``, ``cross-2.safetensors``: the cross-encoder (fp16) without its word embeddings,
  which stay frozen at the base model's (the product rebuilds the folder from the PyPI model).

Model choice reads the validation part (5% of the training citing papers) and the drafts-dev *training*
part only; the pack's test split and drafts-dev's test part are scored for the report, never for a choice.
"""

from __future__ import annotations

import argparse
import json
import lzma
import math
import random
import time
from collections import defaultdict
from pathlib import Path

import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file
from tokenizers import Tokenizer
from transformers import BertConfig, BertForSequenceClassification, BertModel

T0 = time.time()
TAU = 0.05
Q_LEN, D_LEN, X_LEN = 128, 256, 256
SHIP_LAYERS = (3, 4, 5)


def log(*a: object) -> None:
    print(f"[{time.time() - T0:7.1f}s]", *a, flush=True)


class Run:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.amp = self.dev.type == "cuda"
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        folder = Path(args.model)
        self.config = BertConfig.from_json_file(str(folder / "config.json"))
        self.base = {
            k: v.float()
            for k, v in load_file(str(folder / "model.safetensors")).items()
            if k != "embeddings.position_ids"
        }
        self.tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tok.no_padding()
        self.results: dict = {"device": torch.cuda.get_device_name(0) if self.amp else "cpu", "stages": {}}
        with lzma.open(args.data, "rt", encoding="utf-8") as f:
            data = json.load(f)
        keys = [k for k, _ in data["docs"]]
        self.docs: dict[str, str] = dict(data["docs"])
        self.pairs: list[dict] = data["pairs"]
        for p in self.pairs:  # doc indexes (the compact file) back to keys
            p["d"] = keys[p["d"]]
            for f in ("g", "s", "bm"):
                p[f] = [keys[i] for i in p[f]]
        self.drafts: list[dict] = data["drafts"]
        if args.smoke:
            rnd = random.Random(0)
            held = [p for p in self.pairs if p["val"] or p["split"] == "test"]
            self.pairs = rnd.sample([p for p in self.pairs if p not in held], 120) + held[:40]
            for p in self.pairs[120:130]:
                p["val"] = True
            keep = {p["d"] for p in self.pairs} | {d for p in self.pairs for d in p["g"] + p["bm"][:3]}
            self.docs = {k: v[:300] for k, v in self.docs.items() if k in keep}
            for p in self.pairs:
                p["bm"] = [d for d in p["bm"] if d in self.docs]
                p["g"] = [d for d in p["g"] if d in self.docs]
                p["s"] = [d for d in p["s"] if d in self.docs]
            self.drafts = [d for d in self.drafts if d["part"] == "train"][:1] + [
                d for d in self.drafts if d["part"] == "test"
            ][:1]
            for d in self.drafts:
                d["queries"], d["gold"] = d["queries"][:8], d["gold"][:8]
                d["refs"] = {b: dict(list(r.items())[:25]) for b, r in d["refs"].items()}
        self.doc_keys = list(self.docs)
        self.doc_index = {k: i for i, k in enumerate(self.doc_keys)}
        self.train = [p for p in self.pairs if p["split"] == "train" and not p["val"]]
        self.val = [p for p in self.pairs if p["val"]]
        self.test = [p for p in self.pairs if p["split"] == "test"]
        self.train_docs = sorted({self.doc_index[p["d"]] for p in self.train})
        log(
            f"device {self.results['device']}; {len(self.train)} train, {len(self.val)} val, {len(self.test)} test "
            f"pairs; {len(self.docs)} docs ({len(self.train_docs)} cited in train)"
        )
        self.results["sizes"] = {
            "train": len(self.train),
            "val": len(self.val),
            "test": len(self.test),
            "docs": len(self.docs),
            "train_docs": len(self.train_docs),
        }

    # ---- encoding -------------------------------------------------------------------------------------
    def batch(self, texts: list[str], max_len: int, pairs: list[str] | None = None) -> dict[str, torch.Tensor]:
        self.tok.enable_truncation(max_length=max_len)
        enc = self.tok.encode_batch(list(zip(texts, pairs, strict=True)) if pairs is not None else texts)
        width = max(len(e.ids) for e in enc)
        ids = torch.zeros((len(enc), width), dtype=torch.long)
        mask = torch.zeros((len(enc), width), dtype=torch.long)
        types = torch.zeros((len(enc), width), dtype=torch.long)
        for i, e in enumerate(enc):
            n = len(e.ids)
            ids[i, :n] = torch.tensor(e.ids)
            mask[i, :n] = 1
            types[i, :n] = torch.tensor(e.type_ids)
        return {
            "input_ids": ids.to(self.dev),
            "attention_mask": mask.to(self.dev),
            "token_type_ids": types.to(self.dev),
        }

    @staticmethod
    def pool(model: BertModel, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        out = model(**inputs).last_hidden_state
        mask = inputs["attention_mask"].unsqueeze(-1).to(out.dtype)
        return F.normalize((out * mask).sum(1) / mask.sum(1).clamp(min=1e-9), dim=-1)

    @torch.no_grad()
    def encode(
        self, model: BertModel, texts: list[str], max_len: int, bs: int = 256, amp: bool = False
    ) -> torch.Tensor:
        model.eval()
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = torch.zeros((len(texts), self.config.hidden_size), device=self.dev)
        for s in range(0, len(order), bs):
            idx = order[s : s + bs]
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp and self.amp):
                v = self.pool(model, self.batch([texts[i] for i in idx], max_len))
            out[idx] = v.float()
        return out

    def bert(self) -> BertModel:
        model = BertModel(self.config, add_pooling_layer=True)
        missing, unexpected = model.load_state_dict(self.base, strict=False)
        assert not unexpected and all("position_ids" in m for m in missing), (missing, unexpected)
        return model.to(self.dev)

    # ---- evaluation -----------------------------------------------------------------------------------
    def pack_metrics(self, q: torch.Tensor, pairs: list[dict], D: torch.Tensor) -> dict:
        """Rank of each pair's paper among all docs (other papers of its cite command/sentence masked) and
        among its citing paper's own references (the users' job: a library of one paper's .bib)."""
        by_citing: dict[str, set[int]] = defaultdict(set)
        for p in pairs:
            by_citing[p["c"]].add(self.doc_index[p["d"]])
        ranks_all, ranks_own = [], []
        for s in range(0, len(pairs), 1024):
            chunk = pairs[s : s + 1024]
            scores = q[s : s + 1024] @ D.T
            for j, p in enumerate(chunk):
                row = scores[j].clone()
                gold = self.doc_index[p["d"]]
                for other in set(p["g"]) | set(p["s"]):
                    if other != p["d"] and other in self.doc_index:
                        row[self.doc_index[other]] = -1e9
                ranks_all.append(int((row > row[gold]).sum()) + 1)
                own = torch.tensor(sorted(by_citing[p["c"]]), device=self.dev)
                ranks_own.append(int((row[own] > row[gold]).sum()) + 1)
        return {"all": summarize(ranks_all), "own_refs": summarize(ranks_own)}

    def draft_metrics(self, model: BertModel | None, doc_vectors: dict, part: str, bib: str) -> dict:
        ranks = []
        for d in self.drafts:
            if d["part"] != part:
                continue
            keys = list(d["refs"][bib])
            D = doc_vectors[(d["paper"], bib)]
            q = (
                self.encode(model, d["queries"], Q_LEN)
                if model is not None
                else self.encode(self.base_model, d["queries"], D_LEN)
            )
            scores = q @ D.T
            for j, gold in enumerate(d["gold"]):
                g = [keys.index(k) for k in gold if k in d["refs"][bib]]
                if not g:
                    continue
                best = max(float(scores[j, i]) for i in g)
                ranks.append(int((scores[j] > best).sum()) + 1)
        return summarize(ranks)

    def evaluate(self, name: str, model: BertModel | None) -> dict:
        """``model`` None: the base model as the library runs it today (queries at 256 tokens)."""
        enc = (
            (lambda texts: self.encode(model, texts, Q_LEN))
            if model is not None
            else (lambda texts: self.encode(self.base_model, texts, D_LEN))
        )
        out = {
            "val": self.pack_metrics(enc([p["q"] for p in self.val]), self.val, self.D),
            "test": self.pack_metrics(enc([p["q"] for p in self.test]), self.test, self.D),
        }
        for part in ("train", "test"):
            for bib in ("refs-enriched.bib", "refs.bib"):
                out[f"drafts-{part}-{bib.split('.')[0]}"] = self.draft_metrics(model, self.draft_docs, part, bib)
        log(name, json.dumps({k: (v["all"] if "all" in v else v) for k, v in out.items()}))
        return out

    # ---- the query tower ------------------------------------------------------------------------------
    def train_query(
        self,
        name: str,
        *,
        trainable: str,
        negatives: str,
        epochs: float,
        size: int | None = None,
        lr: float = 1e-4,
        bs: int = 64,
        eval_each_epoch: bool = False,
    ) -> BertModel:
        t = time.time()
        model = self.bert()
        for n, prm in model.named_parameters():
            if trainable == "full":
                prm.requires_grad = "word_embeddings" not in n
            else:
                prm.requires_grad = any(n.startswith(f"encoder.layer.{i}.") for i in SHIP_LAYERS)
        params = [p for p in model.parameters() if p.requires_grad]
        data = list(self.train)
        if size:
            data = random.Random(size).sample(data, min(size, len(data)))
        steps_per_epoch = max(1, len(data) // bs)
        total = max(1, int(steps_per_epoch * epochs))
        opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.01)
        warm = max(1, total // 20)
        sched = torch.optim.lr_scheduler.LambdaLR(
            opt, lambda s: min((s + 1) / warm, max(0.0, (total - s) / (total - warm + 1)))
        )
        pool = torch.tensor(self.train_docs, device=self.dev)
        D_pool = self.D[pool]
        pos_in_pool = {int(d): i for i, d in enumerate(self.train_docs)}
        refs_of: dict[str, list[int]] = defaultdict(list)
        for p in self.train:
            refs_of[p["c"]].append(pos_in_pool[self.doc_index[p["d"]]])
        rnd = random.Random(7)
        step, seen, history = 0, 0, []
        model.train()
        while step < total:
            rnd.shuffle(data)
            for s in range(0, len(data) - bs + 1, bs):
                if step >= total:
                    break
                chunk = data[s : s + bs]
                target = torch.tensor([pos_in_pool[self.doc_index[p["d"]]] for p in chunk], device=self.dev)
                with torch.autocast("cuda", dtype=torch.bfloat16, enabled=self.amp):
                    q = self.pool(model, self.batch([p["q"] for p in chunk], Q_LEN)).float()
                if negatives == "pool":
                    cols = torch.arange(len(self.train_docs), device=self.dev)
                else:
                    wanted = set(target.tolist())
                    if negatives == "citing":
                        for p in chunk:
                            wanted.update(refs_of[p["c"]])
                    cols = torch.tensor(sorted(wanted), device=self.dev)
                logits = q @ D_pool[cols].T / TAU
                col_of = {int(c): i for i, c in enumerate(cols.tolist())}
                for j, p in enumerate(chunk):
                    for other in set(p["g"]) | set(p["s"]):
                        if other != p["d"]:
                            o = pos_in_pool.get(self.doc_index.get(other, -1))
                            if o is not None and o in col_of:
                                logits[j, col_of[o]] = -1e4
                loss = F.cross_entropy(logits, torch.tensor([col_of[int(x)] for x in target.tolist()], device=self.dev))
                optimizer_step(loss, opt, sched, params)
                step += 1
                seen += len(chunk)
                if step % 200 == 0:
                    log(f"{name} step {step}/{total} loss {loss.item():.3f}")
            if eval_each_epoch and step < total:
                history.append(
                    {
                        "pairs": seen,
                        **self.pack_metrics(self.encode(model, [p["q"] for p in self.val], Q_LEN), self.val, self.D),
                    }
                )
                model.train()
        elapsed = time.time() - t
        stage = {
            "trainable": trainable,
            "negatives": negatives,
            "epochs": epochs,
            "pairs": seen,
            "train_size": len(data),
            "seconds": round(elapsed, 1),
            "pairs_per_s": round(seen / elapsed, 1),
            "s_per_epoch": round(elapsed / max(epochs, 1e-9), 1),
            "lr": lr,
            "batch": bs,
            "tau": TAU,
            "trainable_params": sum(p.numel() for p in params),
            "history": history,
        }
        stage["metrics"] = self.evaluate(name, model)
        self.results["stages"][name] = stage
        self.save_results()
        return model

    # ---- the cross-encoder ----------------------------------------------------------------------------
    def negatives_for(
        self, p: dict, dense_top: list[int], rnd: random.Random, n: int = 7, mix: tuple[int, int, int] = (2, 3, 2)
    ) -> list[str]:
        """``mix``: how many negatives from the same citing paper's references, the base dense top 10 and the BM25
        top 10 (the rest, up to ``n``, from lower down those lists)."""
        banned = set(p["g"]) | set(p["s"]) | {p["d"]}
        same = [d for d in self.refs_by_citing[p["c"]] if d not in banned]
        dense = [self.doc_keys[i] for i in dense_top if self.doc_keys[i] not in banned]
        lexical = [d for d in p["bm"] if d not in banned]
        picked: list[str] = []
        for source, count in zip((same, dense, lexical), mix, strict=True):
            pool = [d for d in source[:10] if d not in picked]
            picked += rnd.sample(pool, min(count, len(pool)))
        rest = [d for d in dense[10:30] + lexical[10:] + same[10:] if d not in picked]
        while len(picked) < n and rest:
            picked.append(rest.pop(rnd.randrange(len(rest))))
        while len(picked) < n:
            d = self.doc_keys[rnd.randrange(len(self.doc_keys))]
            if d not in banned and d not in picked:
                picked.append(d)
        return picked[:n]

    def dense_top(self, pairs: list[dict], k: int = 30) -> list[list[int]]:
        q = self.encode(self.base_model, [p["q"] for p in pairs], D_LEN, amp=False)
        out: list[list[int]] = []
        for s in range(0, len(pairs), 2048):
            out += torch.topk(q[s : s + 2048] @ self.D.T, k, dim=1).indices.tolist()
        return out

    def cross_model(self) -> BertForSequenceClassification:
        raw = {k: v for k, v in self.config.to_dict().items() if k not in ("id2label", "label2id", "num_labels")}
        cfg = BertConfig.from_dict(
            {
                **raw,
                "id2label": {0: "LABEL_0"},
                "label2id": {"LABEL_0": 0},
                "architectures": ["BertForSequenceClassification"],
            }
        )
        model = BertForSequenceClassification(cfg)
        assert model.classifier.out_features == 1, model.classifier
        state = {f"bert.{k}": v for k, v in self.base.items()}
        missing, unexpected = model.load_state_dict(state, strict=False)
        assert not unexpected and set(missing) <= {
            "classifier.weight",
            "classifier.bias",
            "bert.embeddings.position_ids",
        }, missing
        model.bert.embeddings.word_embeddings.weight.requires_grad = False
        return model.to(self.dev)

    def cross_scores(self, model: BertForSequenceClassification, query: str, docs: list[str]) -> list[float]:
        model.eval()
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16, enabled=self.amp):
            return model(**self.batch([query] * len(docs), X_LEN, docs)).logits.squeeze(-1).float().tolist()

    def rerank_metrics(
        self, model: BertForSequenceClassification, pairs: list[dict], tops: list[list[int]], depth: int
    ) -> dict:
        """Candidates: RRF (k=60) of the base dense top 30 and the BM25 top 20 over all docs, cut at ``depth``."""
        fused_r, replace_r, blend_r = [], [], []
        for p, top in zip(pairs, tops, strict=True):
            banned = (set(p["g"]) | set(p["s"])) - {p["d"]}
            score: dict[str, float] = defaultdict(float)
            for lst in ([self.doc_keys[i] for i in top], p["bm"]):
                for r, d in enumerate([d for d in lst if d not in banned], start=1):
                    score[d] += 1 / (60 + r)
            cands = sorted(score, key=lambda d: -score[d])[:depth]
            if p["d"] not in cands:
                fused_r.append(10**6)
                replace_r.append(10**6)
                blend_r.append(10**6)
                continue
            s = self.cross_scores(model, p["q"], [self.docs[d] for d in cands])
            by = sorted(range(len(cands)), key=lambda i: -s[i])
            rr = {i: r for r, i in enumerate(by, start=1)}
            blend = sorted(range(len(cands)), key=lambda i: -(1 / (60 + i + 1) + 1 / (60 + rr[i])))
            g = cands.index(p["d"])
            fused_r.append(g + 1)
            replace_r.append(rr[g])
            blend_r.append(blend.index(g) + 1)
        return {"fused": summarize(fused_r), "replace": summarize(replace_r), "rrf_blend": summarize(blend_r)}

    def load_cross(self, folder: str) -> BertForSequenceClassification:
        """A shipped cross-encoder (fp16 weights without the word embeddings) on the base model's embeddings."""
        model = self.cross_model()
        state = {}
        for f in sorted(Path(folder).glob("weights-*.safetensors")):
            state.update({k: v.float() for k, v in load_file(str(f)).items()})
        missing, unexpected = model.load_state_dict(state, strict=False)
        assert not unexpected and all("word_embeddings" in m or "position_ids" in m for m in missing), missing
        return model.to(self.dev)

    def own_bib_metrics(self, model: BertForSequenceClassification, part: str, bib: str = "refs-enriched.bib") -> dict:
        """Each drafts-dev slot of ``part`` scored against every entry of its paper's own .bib (the users' job):
        the rank of its best gold entry, and how often a gold entry outscores another entry of the same .bib
        (what the check asks of a swapped key)."""
        ranks: list[int] = []
        wins = total = 0
        for d in self.drafts:
            if d["part"] != part:
                continue
            keys = list(d["refs"][bib])
            texts = [d["refs"][bib][k] for k in keys]
            for q, gold in zip(d["queries"], d["gold"], strict=True):
                g = [keys.index(k) for k in gold if k in d["refs"][bib]]
                if not g:
                    continue
                s: list[float] = []
                for c in range(0, len(texts), 256):
                    s += self.cross_scores(model, q, texts[c : c + 256])
                best = max(s[i] for i in g)
                ranks.append(sum(x > best for x in s) + 1)
                others = [x for i, x in enumerate(s) if i not in g]
                for i in g:
                    wins += sum(s[i] > x for x in others)
                    total += len(others)
        out = summarize(ranks)
        out["pair_auc"] = round(wins / max(1, total), 4)
        return out

    def cross_report(self, model: BertForSequenceClassification, final: bool) -> dict:
        rnd = random.Random(5)
        val = rnd.sample(self.val, min(1000, len(self.val)))
        out = {"val": {"depth10": self.rerank_metrics(model, val, self.dense_top(val), 10)},
               "drafts-train": self.own_bib_metrics(model, "train")}
        if final:
            test = rnd.sample(self.test, min(1000, len(self.test)))
            tt = self.dense_top(test)
            out["test"] = {f"depth{k}": self.rerank_metrics(model, test, tt, k) for k in (10, 20)}
            out["drafts-test"] = self.own_bib_metrics(model, "test")
        log("cross report", json.dumps(out))
        return out

    def cross_only(self) -> None:
        """The third call: the shipped cross-encoder scored, then one trained for several epochs with more of
        the same citing paper's references among its negatives, scored after each epoch (weights kept each)."""
        a = self.args
        if a.shipped_cross and list(Path(a.shipped_cross).glob("weights-*.safetensors")):
            self.results["stages"]["shipped-cross"] = self.cross_report(self.load_cross(a.shipped_cross), final=True)
            self.save_results()
        mix = tuple(int(x) for x in a.mix.split(","))
        self.train_cross(a.cross_budget, epochs=a.epochs, mix=mix, name="cross-long")
        log("all done")
        self.save_results()

    def train_cross(
        self,
        budget_s: float,
        bs: int = 16,
        lr: float = 4e-5,
        epochs: float = 1.0,
        mix: tuple[int, int, int] = (2, 3, 2),
        name: str = "",
    ) -> None:
        t = time.time()
        self.refs_by_citing: dict[str, list[str]] = defaultdict(list)
        for p in self.train:
            if p["d"] not in self.refs_by_citing[p["c"]]:
                self.refs_by_citing[p["c"]].append(p["d"])
        data = list(self.train)
        tops = self.dense_top(data)
        log(f"cross: mined dense top-30 for {len(data)} pairs")
        model = self.cross_model()
        t = time.time()  # the budget is for training steps (mining above is not counted)
        params = [p for p in model.parameters() if p.requires_grad]
        opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.01)
        total = max(1, int(len(data) * epochs) // bs)
        warm = max(1, total // 10)
        sched = torch.optim.lr_scheduler.LambdaLR(
            opt, lambda s: min((s + 1) / warm, max(0.05, (total - s) / (total - warm + 1)))
        )
        rnd = random.Random(11)
        order: list[int] = []
        for _ in range(max(1, math.ceil(epochs))):
            one = list(range(len(data)))
            rnd.shuffle(one)
            order += one
        order = order[: total * bs]
        model.train()
        step, seen = 0, 0
        per_epoch: list[dict] = []
        for s in range(0, len(order) - bs + 1, bs):
            if time.time() - t > budget_s:
                log(f"cross: stopped by the budget at step {step}/{total}")
                break
            idx = order[s : s + bs]
            queries, docs = [], []
            for i in idx:
                p = data[i]
                group = [p["d"]] + self.negatives_for(p, tops[i], rnd, mix=mix)
                queries += [p["q"]] * len(group)
                docs += [self.docs[d] for d in group]
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=self.amp):
                logits = model(**self.batch(queries, X_LEN, docs)).logits.float().view(len(idx), -1)
            loss = F.cross_entropy(logits, torch.zeros(len(idx), dtype=torch.long, device=self.dev))
            optimizer_step(loss, opt, sched, params)
            step += 1
            seen += len(idx)
            if step % 200 == 0:
                log(f"cross step {step}/{total} loss {loss.item():.3f}")
            if name and seen % len(data) < bs and step < total:  # an epoch ended: score it, keep its weights
                e = len(per_epoch) + 1
                per_epoch.append({"epoch": e, "seconds": round(time.time() - t, 1), **self.cross_report(model, False)})
                self.save_cross(model, f"{name}-e{e}")
                model.train()
        elapsed = time.time() - t
        stage = {
            "groups": seen,
            "group_size": 8,
            "epoch_fraction": round(seen / len(data), 3),
            "seconds": round(elapsed, 1),
            "queries_per_s": round(seen / elapsed, 1),
            "lr": lr,
            "batch_queries": bs,
            "max_len": X_LEN,
            "negatives": f"{mix[0]} same-citing-paper refs, {mix[1]} base-dense top-10, {mix[2]} BM25 top-10 "
            "(others of the cite command and sentence never)",
        }
        if name:
            stage["epochs"] = per_epoch
            stage["final"] = self.cross_report(model, True)
            self.results["stages"][name] = stage
            self.save_cross(model, name)
            self.save_results()
            return
        rnd = random.Random(5)
        val = rnd.sample(self.val, min(1000, len(self.val)))
        test = rnd.sample(self.test, min(1000, len(self.test)))
        vt, tt = self.dense_top(val), self.dense_top(test)
        stage["val"] = {f"depth{k}": self.rerank_metrics(model, val, vt, k) for k in (10, 20)}
        stage["test"] = {f"depth{k}": self.rerank_metrics(model, test, tt, k) for k in (10, 20)}
        log("cross", json.dumps({k: stage[k] for k in ("val", "test")}))
        self.results["stages"]["cross"] = stage
        self.save_cross(model, "cross")
        self.save_results()

    def save_cross(self, model: BertForSequenceClassification, name: str) -> None:
        """fp16, without the word embeddings, in two files (each under the device's 16 MiB a file)."""
        state = {
            k: v.detach().half().cpu().contiguous()
            for k, v in model.state_dict().items()
            if "word_embeddings" not in k and "position_ids" not in k
        }
        first = {
            k: v
            for k, v in state.items()
            if not any(f"layer.{i}." in k for i in (3, 4, 5)) and "classifier" not in k and "pooler" not in k
        }
        save_file(first, str(self.out / f"{name}-1.safetensors"))
        save_file({k: v for k, v in state.items() if k not in first}, str(self.out / f"{name}-2.safetensors"))

    def save_results(self) -> None:
        self.results["elapsed_s"] = round(time.time() - T0, 1)
        (self.out / "results.json").write_text(json.dumps(self.results, indent=1))

    def main(self) -> None:
        self.out = Path(self.args.out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.base_model = self.bert()
        self.D = self.encode(self.base_model, [self.docs[k] for k in self.doc_keys], D_LEN)
        if self.args.cross_only:
            return self.cross_only()
        self.draft_docs = {}
        for d in self.drafts:
            for bib, refs in d["refs"].items():
                self.draft_docs[(d["paper"], bib)] = self.encode(self.base_model, list(refs.values()), D_LEN)
        log("document vectors done")
        a = self.args
        if a.second:
            return self.second_run()
        self.results["stages"]["base"] = {"metrics": self.evaluate("base", None)}
        self.save_results()
        shipped = self.train_query(
            "top3-pool", trainable="top", negatives="pool", epochs=a.epochs, lr=2e-4, eval_each_epoch=True
        )
        save_file(
            {
                k: v.detach().half().cpu().contiguous()
                for k, v in shipped.state_dict().items()
                if any(k.startswith(f"encoder.layer.{i}.") for i in SHIP_LAYERS)
            },
            str(self.out / "qenc.safetensors"),
        )
        del shipped
        self.train_cross(a.cross_budget)
        # ablations, most informative first, each only while the run's deadline leaves room for it
        plan = [
            ("full-pool", dict(trainable="full", negatives="pool", epochs=a.epochs, lr=5e-5)),
            ("top3-inbatch", dict(trainable="top", negatives="inbatch", epochs=1, lr=2e-4)),
            ("top3-citing", dict(trainable="top", negatives="citing", epochs=1, lr=2e-4)),
            ("top3-pool-1epoch", dict(trainable="top", negatives="pool", epochs=1, lr=2e-4)),
            ("top3-pool-10k", dict(trainable="top", negatives="pool", epochs=a.epochs, size=10000, lr=2e-4)),
            ("top3-pool-30k", dict(trainable="top", negatives="pool", epochs=a.epochs, size=30000, lr=2e-4)),
        ]
        per_pair = self.results["stages"]["top3-pool"]["seconds"] / max(1, self.results["stages"]["top3-pool"]["pairs"])
        for name, kw in plan if a.ablations else []:
            pairs = min(kw.get("size") or len(self.train), len(self.train)) * float(kw["epochs"])
            cost = pairs * per_pair * (1.6 if kw["trainable"] == "full" else 1.0) + 15
            if time.time() - T0 + cost > a.deadline:
                log(f"skipped {name}: {cost:.0f}s would pass the deadline")
                self.results["stages"][name] = {"skipped": f"needed ~{cost:.0f}s past the run's deadline"}
                continue
            self.train_query(name, **kw)
        log("all done")
        self.save_results()

    def second_run(self) -> None:
        """The second call on the GPU (what the first one's deadline left out): the shipped shape trained longer,
        each epoch scored on the validation part, then the full tower (1 epoch) and the 30k-pair row."""
        a = self.args
        longer = self.train_query(
            f"top3-pool-{a.epochs:g}ep",
            trainable="top",
            negatives="pool",
            epochs=a.epochs,
            lr=2e-4,
            eval_each_epoch=True,
        )
        save_file(
            {
                k: v.detach().half().cpu().contiguous()
                for k, v in longer.state_dict().items()
                if any(k.startswith(f"encoder.layer.{i}.") for i in SHIP_LAYERS)
            },
            str(self.out / "qenc-long.safetensors"),
        )
        del longer
        for name, kw, cost in (
            ("full-pool-1epoch", dict(trainable="full", negatives="pool", epochs=1, lr=5e-5), 70),
            ("top3-pool-30k", dict(trainable="top", negatives="pool", epochs=3, size=30000, lr=2e-4), 60),
        ):
            if time.time() - T0 + cost > a.deadline:
                log(f"skipped {name}")
                continue
            self.train_query(name, **kw)
        log("all done")
        self.save_results()


def optimizer_step(
    loss: torch.Tensor,
    opt: torch.optim.Optimizer,
    sched: torch.optim.lr_scheduler.LRScheduler,
    params: list[torch.nn.Parameter],
) -> None:
    """One step of either model's recipe: gradients clipped at norm 1, then the optimizer and the schedule."""
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(params, 1.0)
    opt.step()
    sched.step()


def summarize(ranks: list[int]) -> dict:
    n = len(ranks)
    if not n:
        return {"n": 0}
    return {
        "n": n,
        "r1": round(sum(r == 1 for r in ranks) / n, 4),
        "r5": round(sum(r <= 5 for r in ranks) / n, 4),
        "r10": round(sum(r <= 10 for r in ranks) / n, 4),
        "mrr": round(sum(1 / r for r in ranks) / n, 4),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--epochs", type=float, default=3)
    ap.add_argument("--cross-budget", type=float, default=200, help="seconds of cross-encoder training at most")
    ap.add_argument("--deadline", type=float, default=430, help="seconds after start past which no ablation starts")
    ap.add_argument("--second", action="store_true", help="the second GPU call: longer top-3 training, full tower, 30k")
    ap.add_argument("--cross-only", action="store_true",
                    help="the third call: the shipped cross-encoder scored, then one trained --epochs with --mix")
    ap.add_argument("--shipped-cross", default="", help="a shipped cross-encoder's folder, scored first")
    ap.add_argument("--mix", default="4,2,1", help="negatives: same citing paper, dense top 10, BM25 top 10")
    ap.add_argument("--no-ablations", dest="ablations", action="store_false")
    ap.add_argument("--smoke", action="store_true", help="a few hundred pairs, to check the script on the CPU")
    args = ap.parse_args()
    random.seed(0)
    torch.manual_seed(0)
    Run(args).main()


if __name__ == "__main__":
    main()
