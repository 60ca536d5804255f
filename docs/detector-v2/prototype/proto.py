import numpy as np, pickle, sys
from scipy.signal import lfilter
DT=0.04
P=dict(tg=1.5, ts=0.06, kmin=6, kmax=200, wmin=25, keymax=0.85, on=0.5, onhold=1.0, match=0.6,
       minsep=0.6, rest=8.0, walk=0.6, stride=(0.8,1.7), vshare=0.1, noise=0.015, lookback=3.0, back=0.4, final=0.6, fback=2)
def lp(x,dt,tau):
    a=1-np.exp(-dt/tau); return lfilter([a],[1,-(1-a)],x,axis=0,zi=(1-a)*x[:1]*0+x[:1]*(1-a))[0] if False else lfilter([a],[1,-(1-a)],x-x[0],axis=0)+x[0]
def prep(d,p):
    t=d[:,0]; x=d[:,1:4]
    dt=np.median(np.diff(t))
    s=lp(lp(x,dt,p['ts']),dt,p['ts'])
    g=lp(x,dt,p['tg'])
    m=s-g
    tg=np.arange(t[0],t[-1],DT)
    a=np.stack([np.interp(tg,t,m[:,i]) for i in range(3)],1)
    G=np.stack([np.interp(tg,t,g[:,i]) for i in range(3)],1)
    u=G/np.maximum(np.linalg.norm(G,axis=1,keepdims=True),1e-9)
    return tg,a,u
def nsdf(a,p):
    N=len(a); K=p['kmax']+1
    e=(a*a).sum(1); ce=np.concatenate([[0],np.cumsum(e)])
    n=np.full((N,K),0.0)
    for k in range(1,min(K,N)):
        W=max(k,p['wmin'])
        pk=np.zeros(N); pk[k:]=(a[k:]*a[:-k]).sum(1)
        cp=np.concatenate([[0],np.cumsum(pk)])
        i=np.arange(N); lo=np.minimum(np.maximum(i-W+1,k),i+1)
        valid=i-W+1>=k
        S=cp[i+1]-cp[lo]; E1=ce[i+1]-ce[lo]; E2=ce[i+1-k]-ce[lo-k]
        n[:,k]=np.where(valid,2*S/np.maximum(E1+E2,1e-12),0)
    return n
def pick(row,p):
    # McLeod key maxima: maxima between positive-going zero crossings
    K=len(row); best=-1; keys=[]
    k=1
    # skip initial positive region (lag near 0 correlation)
    while k<K and row[k]>0: k+=1
    while k<K:
        while k<K and row[k]<=0: k+=1
        if k>=K: break
        j=k; m=k
        while j<K and row[j]>0:
            if row[j]>row[m]: m=j
            j+=1
        if m>=p['kmin']: keys.append(m)
        k=j
    if not keys: return 0,0.0
    mx=max(row[m] for m in keys)
    for m in keys:
        if row[m]>=p['keymax']*mx: return m,row[m]
    return 0,0.0
def walking(v,h,i,k,W,p):
    if not (p['stride'][0]<=k*DT<=p['stride'][1]): return -9
    lo=i-W+1; h2=k//2
    if lo-h2<0: return -9
    A=v[lo:i+1]; B=v[lo-h2:i+1-h2]; C=h[lo:i+1]; D=h[lo-h2:i+1-h2]
    ev=(A*A).sum(); eh=(C*C).sum()
    if ev<p['vshare']*(ev+eh): return -9
    cv=(A*B).sum()/max(np.sqrt(ev*(B*B).sum()),1e-12); ch=(C*D).sum()/max(np.sqrt(eh*(D*D).sum()),1e-12)
    return cv-ch
def ncc(w,T):
    w=w-w.mean(0); d=np.sqrt((w*w).sum()*(T*T).sum())
    return float((w*T).sum()/d) if d>0 else 0.0
def center(w): return w-w.mean(0)
def peaks(s,lo,hi,thr,sep):
    # greedy: local maxima >= thr, keep larger when closer than sep
    out=[]
    for j in range(max(lo,1),min(hi,len(s)-1)):
        if s[j]>=thr and s[j]>=s[j-1] and s[j]>s[j+1]:
            if out and j-out[-1]<sep:
                if s[j]>s[out[-1]]: out[-1]=j
            else: out.append(j)
    return out
def run(d,p=P,trace=False):
    tg,a,u=prep(d,p)
    N=len(a)
    v=(a*u).sum(1); h=a-v[:,None]*u
    n=nsdf(a,p)
    e=(a*a).sum(1); ce=np.concatenate([[0],np.cumsum(e)])
    sets=[]; live=0
    state='out'; runk=None; runstart=None
    i=0
    per=np.zeros(N); cl=np.zeros(N)
    while i<N:
        k,c=pick(n[i],p); per[i]=k; cl[i]=c
        W=max(k,p['wmin']) if k else p['wmin']
        rms=np.sqrt((ce[i+1]-ce[max(0,i+1-W)])/W)
        walk=walking(v,h,i,k,W,p) if k else -9
        if walk>=p['walk']: c=0.0
        if state=='out':
            ok = k>0 and c>=p['on'] and rms>=p['noise']
            if ok and runk is not None and max(k,runk)/min(k,runk)<=1.25:
                runk=0.8*runk+0.2*k
            elif ok:
                runk=k; runstart=i
            else:
                runk=None
            if runk is not None and (i-runstart)*DT>=max(p['onhold'],0.5*runk*DT):
                Pk=int(round(runk)); T=center(a[i-Pk+1:i+1])
                lo=max(Pk, int(i-(p['lookback']+2)*Pk- W))
                s=np.zeros(N)
                for j in range(lo,i+1): s[j]=ncc(a[j-Pk+1:j+1],T)
                # walk back from i along peaks
                pk=peaks(s,lo,i,p['back'],p['minsep']*Pk)
                reps=[]
                last=i
                # the current window ends a cycle at i (template itself)
                for j in reversed(pk):
                    if last-j>1.6*Pk: break
                    if last-j>=p['minsep']*Pk: reps.append(j); last=j
                reps=sorted(reps)
                state='in'; cur=dict(start=i,reps=reps,P=Pk,T=T,s=s,live=len(reps))
                live=len(reps)
        else:
            Pk=cur['P']; T=cur['T']; s=cur['s']
            s[i]=ncc(a[i-Pk+1:i+1],T) if i-Pk+1>=0 else 0
            if walk>=p['walk']: s[i]=0
            j=i-1; lastrep=cur['reps'][-1] if cur['reps'] else cur['start']
            if s[j]>=p['match'] and s[j]>=s[j-1] and s[j]>s[i] and j-lastrep>=p['minsep']*Pk:
                cur['reps'].append(j); cur['live']+=1
                cur['T']=0.8*T+0.2*center(a[j-Pk+1:j+1])
                if k and c>=p['on'] and max(k,Pk)/min(k,Pk)<=1.3: cur['P']=int(round(0.7*Pk+0.3*k)) ; 
                # keep template length consistent
                if len(cur['T'])!=cur['P']:
                    Tn=cur['T']; x=np.linspace(0,len(Tn)-1,cur['P']); cur['T']=np.stack([np.interp(x,np.arange(len(Tn)),Tn[:,q]) for q in range(3)],1)
            if (i-lastrep)*DT>p['rest']:
                sets.append(finish(a,cur,p)); state='out'; runk=None
        i+=1
    if state=='in': sets.append(finish(a,cur,p))
    if trace: return sets,per,cl,tg
    return sets
def finish(a,cur,p):
    reps=cur['reps']; Pk=cur['P']
    if len(reps)<2: return (len(reps),len(reps),round(cur['start']*DT,1),round(Pk*DT,2))
    # template = mean of matched windows
    ws=[center(a[j-Pk+1:j+1]) for j in reps if j-Pk+1>=0]
    T=np.mean(ws,0)
    lo=max(Pk,reps[0]-int(p['fback']*Pk)); hi=min(len(a)-1,reps[-1]+Pk)
    s=np.zeros(len(a))
    for j in range(lo,hi+1): s[j]=ncc(a[j-Pk+1:j+1],T)
    pk=peaks(s,lo,hi+1,p['final'],p['minsep']*Pk)
    return (cur['live'],len(pk),round(cur['start']*DT,1),round(Pk*DT,2))
def evaluate(data,p=P,which=1):
    res=[]
    for r in data:
        sets=run(r['d'],p)
        c=sum(s[which] for s in sets)
        res.append((r,c))
    return res
def score(res,filt):
    errs=[abs(c-r['true']) for r,c in res if filt(r)]
    if not errs: return '-'
    n=len(errs); return f"n {n:3d} MAE {np.mean(errs):5.2f} exact {100*np.mean([e==0 for e in errs]):3.0f} ±1 {100*np.mean([e<=1 for e in errs]):3.0f}"
def report(res,res2=None):
    f=lambda pre: (lambda r: r['file'].startswith(pre))
    print('tbe_main  ',score(res,f('tbe_main')))
    print('cara_clean',score(res,f('cara_clean')))
    print('clean     ',score(res,lambda r: r['file'].startswith(('tbe_main','cara_clean'))))
    print('mixed     ',score(res,f('cara_mixed')))
    print('rest      ',[c for r,c in res if r['file'].startswith('tbe_rest')])
    if res2:
        print('more      ',score(res2,f('cara_more')))
        w=[c for r,c in res2 if r['ex']=='walking']
        print('walking 0:',sum(x==0 for x in w),'/',len(w), w)
if __name__=='__main__':
    a,b=pickle.load(open('/work/proto/data.pkl','rb'))
    r1=evaluate(a); r2=evaluate(b) if 'more' in sys.argv else None
    report(r1,r2)
