#!/usr/bin/env python3
# Functions of src/ longer than a limit (default 150 lines, docs/architecture.md): each
# definition at the start of a line, its body found by brace matching with strings,
# character literals and comments blanked. Prints "LINES FILE:LINE SIGNATURE" per
# function over the limit, longest first; exits 1 when there is one.
#   python3 scripts/function_lengths.py [LIMIT] [FOLDER]
import sys,re,os
N=int(sys.argv[1]) if len(sys.argv)>1 else 150
def strip(s):
    # blank out strings, chars and comments, keeping newlines
    out=[];k=0;n=len(s)
    while k<n:
        if s.startswith('R"',k) and (k==0 or not (s[k-1].isalnum() or s[k-1]=='_')):
            d=s.index('(',k); delim=s[k+2:d]; e=s.index(')'+delim+'"',d)+len(delim)+2
            out.append(re.sub(r'[^\n]',' ',s[k:e])); k=e; continue
        c=s[k]
        if c=='"' or c=="'":
            q=c; j=k+1
            while j<n and s[j]!=q:
                if s[j]=='\\': j+=1
                j+=1
            out.append(' '*(j+1-k)); k=j+1; continue
        if s.startswith('//',k):
            j=s.find('\n',k); j=n if j<0 else j
            out.append(' '*(j-k)); k=j; continue
        if s.startswith('/*',k):
            j=s.index('*/',k)+2; out.append(re.sub(r'[^\n]',' ',s[k:j])); k=j; continue
        out.append(c); k+=1
    return ''.join(out)
res=[]
for root,_,files in os.walk(sys.argv[2] if len(sys.argv)>2 else 'src'):
    for f in files:
        if not f.endswith(('.cpp','.h','.cc')): continue
        p=os.path.join(root,f); raw=open(p,errors='replace').read(); lines=strip(raw).split('\n'); rl=raw.split('\n')
        i=0
        while i<len(lines):
            l=lines[i]
            if re.match(r'^[A-Za-z~].*\)\s*(const)?\s*(override)?\s*(noexcept)?\s*\{\s*$',l) or re.match(r'^[A-Za-z].*\)\s*:\s*\S.*$',l) or re.match(r'^[A-Za-z].*\($',l) or re.match(r'^[A-Za-z][^;]*,$',l):
                j=i
                while j<len(lines) and '{' not in lines[j] and ';' not in lines[j]: j+=1
                if j>=len(lines) or ';' in lines[j] and '{' not in lines[j]: i+=1; continue
                depth=0; k=j; started=False
                while k<len(lines):
                    depth+=lines[k].count('{')-lines[k].count('}')
                    if lines[k].count('{'): started=True
                    if started and depth<=0: break
                    k+=1
                n=k-i+1
                if n>N: res.append((n,p,i+1,rl[i].strip()[:90]))
                i=k+1; continue
            i+=1
for n,p,line,sig in sorted(res,reverse=True): print(f"{n} {p}:{line} {sig}")
sys.exit(1 if res else 0)
