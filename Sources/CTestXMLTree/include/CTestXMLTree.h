// FuzzDecode's second reading of a decoded token element, through libxml2's
// tree API (the library itself uses the SAX push parser). A C target, not a
// system-library module: two Swift-visible modules over libxml2's headers (this
// and the main package's CLibXML2) do not merge, so no libxml2 type is exposed.
#ifndef TOKENINSPECT_CTESTXMLTREE_H
#define TOKENINSPECT_CTESTXMLTREE_H
#include <stddef.h>

enum {
    CTEST_TREE_OK = 0,
    CTEST_TREE_NOT_WELL_FORMED = 1,
    CTEST_TREE_MIXED_CONTENT = 2,
};

/// Parses `bytes` (one element) with xmlReadMemory (no network, entities
/// substituted) and returns, in a buffer the caller frees with
/// ctest_tree_free, the NUL-terminated "path=value" pairs docs/FORMAT.md
/// describes, in document order: namespace declarations and attributes at
/// their element's start ("a/b/@name"), a leaf element's text at its end
/// ("a/b"). `status` says whether the reading succeeded.
char *ctest_tree_fields(const unsigned char *bytes, size_t length, int *status, size_t *out_length);

void ctest_tree_free(char *buffer);

/// Parses a whole document — with xmlReadMemory when `html` is 0 (strict: a
/// document that is not well-formed XML gives CTEST_TREE_NOT_WELL_FORMED), with
/// libxml2's HTML parser otherwise (what a lenient reader makes of it) — never
/// touching the network, and returns its nodes in document order as
/// NUL-terminated records in a buffer freed with ctest_tree_free:
/// "<name" an element opens, "@name=value" one of its attributes, "#text" a
/// text node (a comment "!text"), ">" the element closes. The HAR report's
/// HTML page is checked through it.
char *ctest_markup_nodes(const unsigned char *bytes, size_t length, int html, int *status, size_t *out_length);

#endif
