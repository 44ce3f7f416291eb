"""Device run (H200): the product's MiniLM encoder (citefinder/library/encoders/bert.py, as `library embed --device cuda`
calls it: 256 papers a call) over papers-333k's embedding texts, carried in three parts (.g1 .g2 .g3, JSON lines
[doc_id, text], xz) beside the MiniLM folder (.gpu/model, weights in fp16 for transport); vectors kept on the
device as int8 rows with a float32 scale each (/tmp/v333), copied to $OUT a few files a call (16 MiB each)."""
import json, lzma, os, sys, time
from pathlib import Path
import numpy as np

OUT, KEEP = Path(os.environ["OUT"]), Path("/tmp/v333")


def embed() -> None:
    import torch
    sys.path.insert(0, os.getcwd())
    from citefinder.library.encoders.bert import BertEncoder

    texts = []
    for part in (".g1/part0.jsonl.xz", ".g2/part1.jsonl.xz", ".g3/part2.jsonl.xz"):
        texts += [json.loads(line)[1] for line in lzma.decompress(Path(part).read_bytes()).decode().splitlines()]
    enc = BertEncoder(Path(".gpu/model"), 256, device="cuda")
    enc.encode(texts[:512], 256)
    torch.cuda.synchronize()
    t = time.perf_counter()
    vecs = np.concatenate([enc.encode(texts[s:s + 256], 256) for s in range(0, len(texts), 256)])
    torch.cuda.synchronize()
    seconds = time.perf_counter() - t
    scales = np.abs(vecs).max(axis=1) / 127.0
    q = np.round(vecs / scales[:, None]).astype(np.int8)
    KEEP.mkdir(exist_ok=True)
    np.save(KEEP / "scales.npy", scales.astype(np.float32))
    for i, part in enumerate(np.array_split(q, 8)):
        np.save(KEEP / f"q{i}.npy", part)
    deq = q.astype(np.float32) * scales[:, None]
    deq /= np.linalg.norm(deq, axis=1, keepdims=True)
    info = {"gpu": torch.cuda.get_device_name(0), "papers": len(texts), "embed_s": seconds,
            "papers_per_s": len(texts) / seconds, "int8_min_cos": float((deq * vecs).sum(1).min()),
            "int8_mean_cos": float((deq * vecs).sum(1).mean()), "peak_cuda_mb": torch.cuda.max_memory_allocated() / 2**20}
    (KEEP / "info.json").write_text(json.dumps(info, indent=1))
    print(json.dumps(info, indent=1))


def copy(names: list[str]) -> None:
    import shutil
    for n in names:
        shutil.copy(KEEP / n, OUT / n)


if __name__ == "__main__":
    if sys.argv[1] == "embed":
        embed()
    copy(sys.argv[2:])
