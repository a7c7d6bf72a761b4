/// Receives decoded rows top to bottom and turns them into the final pixel buffer.
///
/// Decoders stream into a sink instead of building a full-size image, so whether the rows are
/// kept as they are or resampled on the fly is decided in one place (`make`).
protocol RowSink: AnyObject {
    /// `row` holds `sourceWidth × channels` bytes; it is only valid during the call.
    func consume(_ row: UnsafePointer<UInt8>)
    /// The finished pixels (charged to the ledger they were made under), handed over: called
    /// once, after the last row. Throws when fewer rows arrived than the image has.
    func finish() throws(ImageCodecError) -> ChargedArray<UInt8>
}

enum RowSinks {
    /// A sink producing `target` pixels from rows of `source` size in `format`: the `crop` of
    /// them (by default all), resampled, or kept as they are when nothing is scaled.
    static func make(
        source: (width: Int, height: Int), crop: PixelRect? = nil, target: (width: Int, height: Int),
        format: PixelFormat, boxPreReduction: Bool = true
    ) throws(ImageCodecError) -> any RowSink {
        let crop = crop ?? PixelRect(width: source.width, height: source.height)
        if source == target && crop == PixelRect(width: target.width, height: target.height) {
            return try RowCollector(width: source.width, height: source.height, format: format)
        }
        if format == .gray { return try GrayResamplingSink(source: source, crop: crop, target: target, boxPreReduction: boxPreReduction) }
        return try ColorResamplingSink(source: source, crop: crop, target: target, format: format, boxPreReduction: boxPreReduction)
    }

    /// The sink for a decoder's rows: the `window` of them (rows of `inputChannels` bytes a
    /// pixel), converted as `plan` says, resampled to `target`.
    ///
    /// A conversion that keeps the pixel layout (an RGB, RGBA or gray profile to sRGB) runs once
    /// on the resampled bitmap: a thumbnail has a few hundred thousand pixels where the
    /// DCT-scaled rows have millions. Resampling in the source's encoding and converting after
    /// it is what converting first and resampling in sRGB's encoding comes to, within a level:
    /// both are gamma-encoded, the filter is linear. CMYK, or a decode at full size, converts
    /// each decoded row ahead of everything else (only the window's columns and rows).
    static func make(
        window: RowWindow, inputChannels: Int, target: (width: Int, height: Int), format: PixelFormat,
        boxPreReduction: Bool, plan: ColorPlan
    ) throws(ImageCodecError) -> any RowSink {
        let region = window.size
        let resampling = try make(source: region, crop: window.crop, target: target, format: format, boxPreReduction: boxPreReduction)
        var sink = resampling
        if let conversion = plan.conversion {
            if case .transform(let transform) = conversion, transform.layout.output == transform.layout, !window.copies(to: target) {
                sink = ColorConvertingOutputSink(transform: transform, channels: format.channels, next: resampling)
            } else {
                sink = try ColorConvertingSink(conversion: conversion, width: region.width, outputChannels: format.channels, next: resampling)
            }
        }
        return window.passesEverything ? sink : CroppingSink(window: window, channels: inputChannels, next: sink)
    }

    /// Bytes the sinks `make(window:...)` builds allocate: the resampler (or the collected rows)
    /// and the result, and a converted row.
    static func plannedBytes(window: RowWindow, target: (width: Int, height: Int), format: PixelFormat) -> Int {
        let region = window.size
        let row = region.width * format.channels
        if window.copies(to: target) { return row + target.width * target.height * format.channels }
        return row
            + (format == .gray
                ? StreamingResampler<Float>.plannedBytes(
                    sourceWidth: region.width, sourceHeight: region.height, crop: window.crop,
                    targetWidth: target.width, targetHeight: target.height, format: format)
                : StreamingResampler<SIMD4<Float>>.plannedBytes(
                    sourceWidth: region.width, sourceHeight: region.height, crop: window.crop,
                    targetWidth: target.width, targetHeight: target.height, format: format))
    }
}
