import ImageCodec

/// What the memory cache can answer without I/O.
extension ImagePipeline {
    /// The size images for `request` are decoded at and cached under: nil (full size) for `.decoded`.
    func decodeSize(for request: ImageRequest) -> Resize? {
        configuration.strategy == .decoded ? nil : request.resize
    }

    func memoryKey(for request: ImageRequest) -> ImageMemoryKey {
        ImageMemoryKey(dataKey: request.dataKey, resize: decodeSize(for: request))
    }

    /// A memory hit the request's policy allows (and its `Vary`d headers match).
    func memoryResponse(for request: ImageRequest, decodingEncoded: Bool) -> ImageResponse? {
        let now = configuration.clock.now
        if let imageMemory {
            guard let hit = imageMemory.value(forKey: memoryKey(for: request)), hit.info.matches(request.urlRequest),
                request.cachePolicy.serves(hit.info, at: now)
            else { return nil }
            recorder.add(.memoryHits)
            return ImageResponse(bitmap: hit.bitmap, source: .memory)
        }
        guard decodingEncoded, let dataMemory, let hit = dataMemory.value(forKey: request.dataKey), hit.info.matches(request.urlRequest),
            request.cachePolicy.serves(hit.info, at: now), let bitmap = try? decode(hit.data, resize: decodeSize(for: request))
        else { return nil }
        recorder.add(.memoryHits)
        return ImageResponse(bitmap: bitmap, source: .memory)
    }

    /// True when the memory cache could serve `request` now (nothing counted, nothing decoded).
    func isInMemory(_ request: ImageRequest) -> Bool {
        let now = configuration.clock.now
        if let imageMemory {
            guard let hit = imageMemory.value(forKey: memoryKey(for: request)) else { return false }
            return hit.info.matches(request.urlRequest) && request.cachePolicy.serves(hit.info, at: now)
        }
        guard let hit = dataMemory?.value(forKey: request.dataKey) else { return false }
        return hit.info.matches(request.urlRequest) && request.cachePolicy.serves(hit.info, at: now)
    }
}
