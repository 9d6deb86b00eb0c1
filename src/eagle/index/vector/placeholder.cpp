// Replaced by the vector module's sources.
namespace eagle::index {
void vector_module_placeholder() {}
}
