// Parsing a configuration already read into elements (xml_tree.hpp): the
// `xios` interface reads iodef.xml once, edits the elements at run time
// (xios_add_child, xios_set_*_attr) and parses the result at
// close_context_definition. Same checks and messages as parse_config.
#pragma once

#include <string>

#include "xios_lite/config.hpp"
#include "xml_tree.hpp"

namespace xios_lite {

/// Reads and checks one context of the tree rooted at `root` (a
/// <simulation>), as parse_config does for a file named `path`. Not
/// collective; thread-safe for distinct trees.
[[nodiscard]] Config parse_config_tree(const config::Element& root, const std::string& path,
                                       const std::string& context);

}  // namespace xios_lite
