// Replaced by the filter module's sources.
namespace eagle::filter {
void filter_module_placeholder() {}
}
