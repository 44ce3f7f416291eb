"""Device run: the product's MiniLM encoder (citefinder/library/encoders/bert.py) on CUDA over papers-50k's embedding texts,
as `library embed --device cuda` calls it (256 papers a call); vectors back as fp16 in files under 16 MiB."""
import json, lzma, os, sys, time, platform
from pathlib import Path
import numpy as np
import torch
sys.path.insert(0, os.getcwd())
from citefinder.library.encoders.bert import BertEncoder

out = Path(os.environ["OUT"])
data = json.loads(lzma.decompress(Path(".gpu/texts.json.xz").read_bytes()))
ids, texts = data["ids"], data["texts"]
res = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "papers": len(texts),
       "cpu_count": os.cpu_count(), "node": platform.node()}
t = time.perf_counter(); enc = BertEncoder(Path(".gpu/model"), 256, device="cuda"); res["load_s"] = time.perf_counter() - t
enc.encode(texts[:512], 256); torch.cuda.synchronize()
for bs in (256,):
    t = time.perf_counter(); c = time.process_time()
    vecs = np.concatenate([enc.encode(texts[s:s + 256], bs) for s in range(0, len(texts), 256)])
    torch.cuda.synchronize()
    res[f"calls256_batch{bs}_s"] = time.perf_counter() - t; res[f"calls256_batch{bs}_cpu_s"] = time.process_time() - c
t = time.perf_counter(); enc.encode(texts[:20000], 1024); torch.cuda.synchronize(); res["batch1024_20k_s"] = time.perf_counter() - t
res["peak_cuda_mb"] = torch.cuda.max_memory_allocated() / 2**20
torch.set_num_threads(os.cpu_count() or 1)
cpu = BertEncoder(Path(".gpu/model"), 256, device="cpu")
cpu.encode(texts[:64], 32)
t = time.perf_counter(); cv = cpu.encode(texts[:2000], 32); res["cpu_2000_s"] = time.perf_counter() - t
res["cpu_threads"] = torch.get_num_threads()
res["gpu_vs_cpu_min_cos"] = float((cv * vecs[:2000]).sum(1).min())
res["papers_per_s_gpu"] = len(texts) / res["calls256_batch256_s"]; res["papers_per_s_cpu_device"] = 2000 / res["cpu_2000_s"]
h = vecs.astype(np.float16)
parts = np.array_split(h, 3)
for i, p in enumerate(parts):
    np.save(out / f"vec{i}.npy", p)
(out / "ids.json").write_text(json.dumps(ids))
(out / "timing.json").write_text(json.dumps(res, indent=1))
print(json.dumps(res, indent=1))
