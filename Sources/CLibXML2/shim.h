// Umbrella header for the parts of libxml2 the token parser uses:
// the push parser context, the SAX2 handler and the predefined entities.
#ifndef TOKENINSPECT_CLIBXML2_SHIM_H
#define TOKENINSPECT_CLIBXML2_SHIM_H
#include <libxml/xmlversion.h>
// Debian builds libxml2 with ICU, so <libxml/encoding.h> would include the
// system's <unicode/ucnv.h>, whose types clash with the ICU copy Foundation
// ships (_FoundationICU) as soon as both modules meet in one build. The only
// ICU-dependent declarations are two pointer fields at the end of
// xmlCharEncodingHandler, a struct this project never touches (it only holds
// pointers to it), so hiding ICU changes no layout the Swift code uses.
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/SAX2.h>
#include <libxml/entities.h>
#include <libxml/xmlerror.h>
#endif
