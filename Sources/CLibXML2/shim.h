// Umbrella header for the parts of libxml2 the token parser uses:
// the push parser context, the SAX2 handler and the predefined entities.
#ifndef TOKENINSPECT_CLIBXML2_SHIM_H
#define TOKENINSPECT_CLIBXML2_SHIM_H
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/SAX2.h>
#include <libxml/entities.h>
#include <libxml/xmlerror.h>
#endif
