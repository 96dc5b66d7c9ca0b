#ifndef MOONMOCK_CYAML_VENDORED_H
#define MOONMOCK_CYAML_VENDORED_H

// libyaml 0.2.5 built from its own sources (third-party/libyaml-0.2.5, unmodified), then the
// same shim the system library's module uses: shim.h includes <yaml.h> only when no libyaml
// header came first.
#include "../third-party/libyaml-0.2.5/include/yaml.h"
#include "../../CYAML/shim.h"

#endif
