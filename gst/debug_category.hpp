#pragma once
// The "framecl" GST_DEBUG category (GST_DEBUG=framecl:5), defined in plugin.cpp and
// used by every file of the element.

#include <gst/gst.h>

GST_DEBUG_CATEGORY_EXTERN(gst_framecl_debug);
#define GST_CAT_DEFAULT gst_framecl_debug
