/// Receives decoded rows top to bottom and turns them into the final pixel buffer.
///
/// Decoders stream into a sink instead of building a full-size image, so whether the rows are
/// kept as they are or resampled on the fly is decided in one place (`make`).
protocol RowSink: AnyObject {
    /// `row` holds `sourceWidth × channels` bytes; it is only valid during the call.
    func consume(_ row: UnsafePointer<UInt8>)
    /// The finished pixels, handed over: called once, after the last row. Throws when fewer rows
    /// arrived than the image has.
    func finish() throws(ImageCodecError) -> [UInt8]
}

enum RowSinks {
    /// A sink producing `target` pixels from rows of `source` size in `format`.
    static func make(source: (width: Int, height: Int), target: (width: Int, height: Int),
                     format: PixelFormat, boxPreReduction: Bool = true) -> any RowSink {
        if source == target {
            return RowCollector(width: source.width, height: source.height, format: format)
        }
        if format == .gray { return GrayResamplingSink(source: source, target: target, boxPreReduction: boxPreReduction) }
        return ColorResamplingSink(source: source, target: target, format: format, boxPreReduction: boxPreReduction)
    }

    /// The sink for rows that `plan` converts. A conversion that keeps the pixel layout (an
    /// RGB, RGBA or gray profile to sRGB) runs once on the resampled bitmap: a thumbnail has a
    /// few hundred thousand pixels where the DCT-scaled rows have millions. Resampling in the
    /// source's encoding and converting after it is what converting first and resampling in
    /// sRGB's encoding comes to, within a level: both are gamma-encoded, the filter is linear.
    /// CMYK, or a decode at full size, converts each decoded row ahead of everything else.
    static func make(source: (width: Int, height: Int), target: (width: Int, height: Int), format: PixelFormat,
                     boxPreReduction: Bool, plan: ColorPlan) -> any RowSink {
        let resampling = make(source: source, target: target, format: format, boxPreReduction: boxPreReduction)
        guard let conversion = plan.conversion else { return resampling }
        if case .transform(let transform) = conversion, transform.layout.output == transform.layout, source != target {
            return ColorConvertingOutputSink(transform: transform, channels: format.channels, next: resampling)
        }
        return ColorConvertingSink(conversion: conversion, width: source.width, outputChannels: format.channels, next: resampling)
    }
}
