"""Try (not adopted): the residual round only for questions with a relative clause on a common
noun ("the city where ...", "the person who ..."), as adaptive retrieval runs a second round only
for complex questions. Compares no residual, gated and always on each tune half.

    .venv/bin/python benchmarks/experiments/tried/residual_gate.py tune
"""
import sys, json, re
sys.path.insert(0, str(__import__('pathlib').Path(__file__).resolve().parents[3]))
from benchmarks.quality import devsets
from benchmarks.common import DEFAULT_OUT, configure_threads, open_corpus_index
from benchmarks.quality.run_suite import question_group, score
configure_threads(1)
split = sys.argv[1]
REL = re.compile(r"\b(?:the|a|an)\s+(?:[a-z][\w-]*\s+){0,2}(?:who|whom|whose|where|which|that|when)\b")
over = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {"residual_weight": 2.0}
for name in ['musique_50', 'hotpotqa_100', 'lihuaworld']:
    d = devsets.load(name)
    qs = [q for q in d.half(split) if q.has_evidence]
    index, _ = open_corpus_index(DEFAULT_OUT / f"{name}.workdir", d.documents)
    fired = 0
    for mode in ('base', 'gated', 'always'):
        recs, groups = [], {}
        for q in qs:
            hit = bool(REL.search(q.question))
            s = over if (mode == 'always' or (mode == 'gated' and hit)) else {}
            fired += hit and mode == 'gated'
            r = index.query(q.question, mode="mini", top_k=10, token_budget=10**9, **s)
            recs.append(score(q, [c.doc_id for c in r.chunks], [c.text for c in r.chunks]))
            groups.setdefault(question_group(name, q.type), []).append(recs[-1])
        f = lambda rs, m: round(100 * sum(r[m] for r in rs) / len(rs), 1)
        print(name, mode, f(recs, 'recall@5'), f(recs, 'all_evidence@5'), {g: (f(v, 'recall@5'), f(v, 'all_evidence@5')) for g, v in groups.items()}, flush=True)
    print(name, 'gate fired on', fired, 'of', len(qs))
