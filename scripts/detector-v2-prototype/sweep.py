import pickle,itertools,numpy as np,sys
from multiprocessing import Pool
import proto
a,b=pickle.load(open('/work/proto/data.pkl','rb'))
data=a+b
def one(cfg):
    p=dict(proto.P); p.update(cfg)
    out=[]
    for r in data:
        sets=proto.run(r['d'],p)
        out.append((sum(s[0] for s in sets),sum(s[1] for s in sets)))
    return cfg,out
def summ(cfg,out,w):
    def sc(f):
        e=[abs(o[w]-r['true']) for r,o in zip(data,out) if f(r)]
        return np.mean(e),100*np.mean([x<=1 for x in e])
    cl=sc(lambda r:r['file'].startswith(('tbe_main','cara_clean')))
    mx=sc(lambda r:r['file'].startswith('cara_mixed'))
    mo=sc(lambda r:r['file'].startswith('cara_more'))
    wk=[o[w] for r,o in zip(data,out) if r['ex']=='walking' or r['true']==0]
    return f"{cfg} clean {cl[0]:.2f}/{cl[1]:.0f}% mixed {mx[0]:.2f} more {mo[0]:.2f}/{mo[1]:.0f}% zero {sum(x==0 for x in wk)}/{len(wk)}"
if __name__=='__main__':
    grid=eval(sys.argv[1])
    keys=list(grid); cfgs=[dict(zip(keys,v)) for v in itertools.product(*grid.values())]
    for c in cfgs:
        if 'match' in c and 'final' not in c: c['final']=c['match']
    with Pool(2) as pool:
        for cfg,out in pool.imap(one,cfgs):
            print(summ(cfg,out,1),'| live',summ(cfg,out,0).split('clean')[1],flush=True)
