// Placeholder: replaced by the vector benchmark (Eagle HNSW vs hnswlib).
int main() { return 0; }
