"""gpu_workloads.py TASK [AXIS=V ...]: the indices of TASK's GPU-sized
workloads ("device": "gpu"), comma-separated, for `--workloads` (the device
benches time those and leave the small CI shapes, where a launch costs more
than the kernel, to the tests). AXIS=V drops the GPU workloads with that
axis value (attention's S 16384, whose C reference takes minutes)."""
import json
import sys

t = json.load(open(f"tasks/{sys.argv[1]}/task.json"))
drop = [a.split("=", 1) for a in sys.argv[2:]]
keep = [str(i) for i, w in enumerate(t["workloads"])
        if w.get("device") == "gpu" and not any(str(w.get(k)) == v for k, v in drop)]
print(",".join(keep))
