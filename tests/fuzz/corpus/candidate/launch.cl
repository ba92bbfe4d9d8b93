// ksearch: backend=opencl entry=k task=softmax
// ksearch: param VEC in 4,8,16
// ksearch: launch kernel=k global=(rows*LOCAL,2) local=(LOCAL,1) scratch=(4*LOCAL)
// ksearch: launch global=(cdiv(rows,VEC)) local=(64)
__kernel void k(void) {}
