"""nvrtc_check.py: compiles CUDA sources with NVRTC, as MLX's cuda_kernel does
(tests/integration/mlx.sh, on a machine without an MLX GPU). Exit 0 when
every file compiles, 1 with the log of the first that does not, 77 when
there is no NVRTC here.

    python3 nvrtc_check.py FILE.cu...
"""
import ctypes
import ctypes.util
import os
import sys

root = os.environ.get("CUDA_HOME", "/usr/local/cuda")
lib = None
for cand in [os.path.join(root, "lib64", "libnvrtc.so"), ctypes.util.find_library("nvrtc")]:
    if cand:
        try:
            lib = ctypes.CDLL(cand)
            break
        except OSError:
            pass
if lib is None:
    print("no NVRTC (libnvrtc.so)")
    sys.exit(77)
inc = os.path.join(root, "include")
# MLX compiles with --gpu-architecture=sm_<major><minor> (no `a`: its
# jit_module.cpp), so wgmma and setmaxnreg, sm_90a only, are not there
opts = [b"--gpu-architecture=sm_90", b"-std=c++17", b"-default-device",
        ("-I" + inc).encode(), ("-I" + os.path.join(inc, "cccl")).encode()]
for path in sys.argv[1:]:
    src = open(path, "rb").read()
    prog = ctypes.c_void_p()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), src, path.encode(), 0, None, None):
        print(f"{path}: nvrtcCreateProgram failed")
        sys.exit(1)
    arr = (ctypes.c_char_p * len(opts))(*opts)
    rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
    n = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
    log = ctypes.create_string_buffer(n.value)
    lib.nvrtcGetProgramLog(prog, log)
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    if rc:
        print(f"{path}: NVRTC error {rc}\n{log.value.decode(errors='replace')[:3000]}")
        sys.exit(1)
sys.exit(0)
