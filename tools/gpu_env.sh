# gpu_env.sh — sourced by the scripts that run on GPUs (demo_gpu.sh, compare_nccl.sh,
# tests/gpu/*.sh): how many GPUs there are, the NCCL to run against, and how to start one process
# per GPU. Defines functions and variables only; runs nothing when sourced.

# gpu_count: the number of GPUs nvidia-smi lists (0 without a driver).
gpu_count() {
  command -v nvidia-smi >/dev/null 2>&1 || { echo 0; return; }
  nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true
}

# gpu_names: "4 x NVIDIA H100 80GB HBM3" (one entry per distinct name).
gpu_names() {
  nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | sort | uniq -c |
    awk '{n = $1; $1 = ""; printf "%s%s x%s", (NR > 1 ? ", " : ""), n, $0}'
}

# use_pip_nccl: PyTorch's pip NCCL first on LD_LIBRARY_PATH when it is installed (the NCCL
# PyTorch jobs use; machines often have an older system one too), multicast (NVLS) off: weft never
# uses it, and NCCL must not either on shared machines. Sets NCCL_FROM (for the log).
use_pip_nccl() {
  local pip
  pip=$(python3 -c "import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], 'lib'))" \
    2>/dev/null || true)
  if [ -n "$pip" ] && [ -e "$pip/libnccl.so.2" ]; then
    export LD_LIBRARY_PATH=$pip${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    NCCL_FROM=$pip
  else
    NCCL_FROM="the dynamic linker's search path"
  fi
  export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
}

# MPIRUN: mpirun as the scripts start it — as root when root (Open MPI refuses otherwise), no
# binding (as PyTorch and nccl-tests users run), the NCCL environment passed to every rank. Add
# -np N, more -x, and the program.
MPIRUN=(mpirun --bind-to none -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH)
[ "$(id -u)" -eq 0 ] && MPIRUN=(mpirun --allow-run-as-root --bind-to none -x NCCL_NVLS_ENABLE
  -x LD_LIBRARY_PATH)
