import itertools, json, subprocess, sys, numpy as np
R='/work/main/.build/release/repctl'; D='/work/shared/datasets/reps/'
grid=eval(sys.argv[1])
keys=list(grid)
for vals in itertools.product(*grid.values()):
    cfg='/tmp/sw/c.toml'
    open(cfg,'w').write('[detector]\n'+''.join(f'{k} = {v}\n' for k,v in zip(keys,vals)))
    sets=[]
    for m in ['manifest.csv','manifest-more.csv']:
        out=subprocess.run([R,'eval',D+m,'--json','--config',cfg],capture_output=True,text=True)
        sets+=json.loads(out.stdout)['sets']
    def sc(f):
        e=[abs(s['counted']-s['true_reps']) for s in sets if f(s)]
        return np.mean(e), 100*np.mean([x<=1 for x in e])
    cl=sc(lambda s:s['file'].startswith(('tbe_main','cara_clean')))
    tb=sc(lambda s:s['file'].startswith('tbe_main')); ca=sc(lambda s:s['file'].startswith('cara_clean'))
    mx=sc(lambda s:s['file'].startswith('cara_mixed')); mo=sc(lambda s:s['file'].startswith('cara_more'))
    z=[s['counted'] for s in sets if s['true_reps']==0]
    print(dict(zip(keys,vals)), f"clean {cl[0]:.2f}/{cl[1]:.0f}% (tbe {tb[1]:.0f} cara {ca[1]:.0f}) mixed {mx[0]:.2f} more {mo[0]:.2f}/{mo[1]:.0f}% zero {sum(x==0 for x in z)}/{len(z)} sum0 {sum(z)}",flush=True)
