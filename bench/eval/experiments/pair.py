import json,sys
a={json.loads(l)['task']:json.loads(l) for l in open(sys.argv[1])}
b={json.loads(l)['task']:json.loads(l) for l in open(sys.argv[2])}
w=[t for t in a if b[t]['passed'] and not a[t]['passed']]; l=[t for t in a if a[t]['passed'] and not b[t]['passed']]
print(f"{sys.argv[1]} {sum(x['passed'] for x in a.values())} vs {sys.argv[2]} {sum(x['passed'] for x in b.values())}: +{len(w)} -{len(l)}")
if len(sys.argv)>3:
    for t in w: print(' WIN',t,repr(a[t]['cmd'][:70]),'->',repr(b[t]['cmd'][:70]))
    for t in l: print(' LOSS',t,repr(a[t]['cmd'][:70]),'->',repr(b[t]['cmd'][:70]))
