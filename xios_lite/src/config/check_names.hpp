// The names of the output, checked before anything is written (see check_names.cpp).
#pragma once

#include "xios_lite/config.hpp"

namespace xios_lite::config {

/// Throws ep::Error (kConfig, as every check of the definitions) when two
/// files (written or read) share a path stem, or when two NetCDF names of
/// one file meet (two variables, a variable and a coordinate, dimension or
/// bounds variable of the file), naming both places. Runs on completed
/// definitions (complete_definitions calls it), so every process reaches
/// the same verdict. Not collective; thread-safe (reads only).
void check_output_names(const Config& cfg);

}  // namespace xios_lite::config
