import gzip, json
from citefinder.library.records import embedding_text
from citefinder.types import Paper
rows = []
with gzip.open('/work/shared/data/papers-333k.jsonl.gz', 'rt') as f:
    for line in f:
        r = json.loads(line)
        p = Paper(r['doc_id'], r.get('title') or '', abstract=r.get('abstract') or '')
        rows.append(json.dumps([r['doc_id'], embedding_text(p)], ensure_ascii=False))
n = len(rows)
cuts = [0, n * 12 // 100, n * 56 // 100, n]
for i in range(3):
    with open(f'/work/gpu333/part{i}.jsonl', 'w') as f:
        f.write('\n'.join(rows[cuts[i]:cuts[i + 1]]) + '\n')
print(n, cuts)
