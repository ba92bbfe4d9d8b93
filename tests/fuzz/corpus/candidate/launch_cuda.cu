// ksearch: backend=cuda entry=k
// ksearch: param SPLIT in 32,64
// ksearch: param WARPS in 8,4
// ksearch: param MERGE in 0,1
// ksearch: launch kernel=k grid=(cdiv(rows, SPLIT), cols, 1) block=(32 * WARPS, 1, 1) smem=(4 * WARPS * cols) scratch=(4 * rows * max(1, cdiv(cols, SPLIT)))
// ksearch: launch kernel=m when=(1 - MERGE) grid=(rows, 1, 1 + floor(cols / 64)) block=(256, 1, 1) pdl=(MERGE)
#define TILE 16
__global__ void k(void) {}
