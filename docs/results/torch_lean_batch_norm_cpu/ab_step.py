import os, sys, time, resource
R = os.environ.get("R", "/work/main"); sys.path.insert(0, R + "/benchmarks"); sys.path.insert(0, R)
import mixers
model = sys.argv[1]; L = int(sys.argv[2])
net, x, y = mixers.stack_and_batch(model, L, 128, 4, 16384 // L)
opt, loss = mixers.optimizer_and_loss()
net.compile(optimizer=opt, loss=loss)
for _ in range(2): net.train_on_batch(x, y)
ts = []; fs = []
def flt(): return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(int(os.environ.get("N", 7))):
    f = flt(); t = time.perf_counter(); net.train_on_batch(x, y); ts.append(time.perf_counter() - t); fs.append(flt() - f)
print(model, L, os.environ.get("KERAS_BACKEND"), "median", round(sorted(ts)[len(ts)//2], 4), "min", round(min(ts), 4), "faults/step", sorted(fs)[len(fs)//2], "=MiB", sorted(fs)[len(fs)//2]*4/1024)
