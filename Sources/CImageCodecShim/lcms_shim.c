// Little CMS error handler, context and layout constants. See CImageCodecShim.h.
#include "CImageCodecShim.h"

#include <pthread.h>
#include <string.h>

/// The last message Little CMS logged on this thread; a failing call copies it out.
static _Thread_local char iec_cms_last_message[IEC_MESSAGE_MAX];

static void iec_cms_log(cmsContext context, cmsUInt32Number code, const char *text) {
    (void)context;
    (void)code;
    strncpy(iec_cms_last_message, text != NULL ? text : "Little CMS error", IEC_MESSAGE_MAX - 1);
    iec_cms_last_message[IEC_MESSAGE_MAX - 1] = '\0';
}

static cmsContext iec_cms_shared_context;
static pthread_once_t iec_cms_once = PTHREAD_ONCE_INIT;

static void iec_cms_make_context(void) {
    iec_cms_shared_context = cmsCreateContext(NULL, NULL);
    // NULL would make every *THR call below use Little CMS' global context, whose error
    // handler is not ours: no context, no colour management (callers see NULL profiles).
    if (iec_cms_shared_context != NULL) cmsSetLogErrorHandlerTHR(iec_cms_shared_context, iec_cms_log);
}

cmsContext iec_cms_context(void) {
    pthread_once(&iec_cms_once, iec_cms_make_context);
    return iec_cms_shared_context;
}

static void iec_cms_take_message(char message[IEC_MESSAGE_MAX], const char *fallback) {
    const char *text = iec_cms_last_message[0] != '\0' ? iec_cms_last_message : fallback;
    strncpy(message, text, IEC_MESSAGE_MAX - 1);
    message[IEC_MESSAGE_MAX - 1] = '\0';
}

cmsHPROFILE iec_cms_open_profile(const uint8_t *bytes, size_t length, char message[IEC_MESSAGE_MAX]) {
    iec_cms_last_message[0] = '\0';
    if (length > 0xFFFFFFFFu) {
        iec_cms_take_message(message, "profile larger than 4 GiB");
        return NULL;
    }
    if (iec_cms_context() == NULL) {
        iec_cms_take_message(message, "Little CMS could not create its context");
        return NULL;
    }
    cmsHPROFILE profile = cmsOpenProfileFromMemTHR(iec_cms_context(), bytes, (cmsUInt32Number)length);
    if (profile == NULL) iec_cms_take_message(message, "Little CMS could not read the profile");
    return profile;
}

cmsHPROFILE iec_cms_create_srgb_profile(void) {
    if (iec_cms_context() == NULL) return NULL;
    return cmsCreate_sRGBProfileTHR(iec_cms_context());
}

cmsHPROFILE iec_cms_create_srgb_gray_profile(void) {
    // The sRGB curve: IEC 61966-2.1's parametric type 4 (Y = ((aX + b)^g for X ≥ d, cX below).
    if (iec_cms_context() == NULL) return NULL;
    const cmsFloat64Number parameters[5] = {2.4, 1.0 / 1.055, 0.055 / 1.055, 1.0 / 12.92, 0.04045};
    cmsToneCurve *curve = cmsBuildParametricToneCurve(iec_cms_context(), 4, parameters);
    if (curve == NULL) return NULL;
    cmsHPROFILE profile = cmsCreateGrayProfileTHR(iec_cms_context(), cmsD50_xyY(), curve);
    cmsFreeToneCurve(curve);
    return profile;
}

static cmsUInt32Number iec_cms_format(iec_cms_layout layout) {
    switch (layout) {
    case IEC_CMS_RGB: return TYPE_RGB_8;
    case IEC_CMS_RGBA: return TYPE_RGBA_8;
    case IEC_CMS_GRAY: return TYPE_GRAY_8;
    case IEC_CMS_GRAYA: return TYPE_GRAYA_8;
    case IEC_CMS_CMYK: return TYPE_CMYK_8;
    case IEC_CMS_CMYK_INVERTED: return TYPE_CMYK_8_REV;
    }
    return 0;
}

cmsHTRANSFORM iec_cms_create_transform(cmsHPROFILE input, iec_cms_layout input_layout, cmsHPROFILE output,
                                       iec_cms_layout output_layout, int intent, int black_point_compensation,
                                       char message[IEC_MESSAGE_MAX]) {
    iec_cms_last_message[0] = '\0';
    cmsUInt32Number flags = cmsFLAGS_NOCACHE;
    if (black_point_compensation) flags |= cmsFLAGS_BLACKPOINTCOMPENSATION;
    // CMYK goes through a sampled 4-D table; the default grid clips out-of-gamut corners
    // before interpolating, which puts colours near the gamut edge up to 12 levels off.
    if (input_layout == IEC_CMS_CMYK || input_layout == IEC_CMS_CMYK_INVERTED) flags |= cmsFLAGS_HIGHRESPRECALC;
    int alpha = (input_layout == IEC_CMS_RGBA || input_layout == IEC_CMS_GRAYA) &&
                (output_layout == IEC_CMS_RGBA || output_layout == IEC_CMS_GRAYA);
    if (alpha) flags |= cmsFLAGS_COPY_ALPHA;
    cmsHTRANSFORM transform = cmsCreateTransformTHR(iec_cms_context(), input, iec_cms_format(input_layout), output,
                                                    iec_cms_format(output_layout), (cmsUInt32Number)intent, flags);
    if (transform == NULL) iec_cms_take_message(message, "Little CMS could not build the transform");
    return transform;
}
