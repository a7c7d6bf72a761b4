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

    /// What the memory cache holds for a request.
    enum MemoryEntry {
        /// A decoded image (`.decoded`, `.downsampled`).
        case image(CachedImage)
        /// Original bytes (`.encodedResponse`).
        case data(CachedData)

        var info: HTTPCacheInfo {
            switch self {
            case .image(let image): image.info
            case .data(let data): data.info
            }
        }
    }

    /// The one memory lookup: the entry for `request` and what it may do for it (nil when
    /// there is none, or it may do nothing).
    func memoryEntry(for request: ImageRequest) -> (entry: MemoryEntry, use: CacheUse)? {
        let entry: MemoryEntry
        if let imageMemory {
            guard let image = imageMemory.value(forKey: memoryKey(for: request)) else { return nil }
            entry = .image(image)
        } else if let dataMemory, let data = dataMemory.value(forKey: request.dataKey) {
            entry = .data(data)
        } else {
            return nil
        }
        let use = request.use(of: entry.info, at: configuration.clock.now)
        return use == .none ? nil : (entry, use)
    }

    /// A memory hit the request may be served now. With `.encodedResponse` the bytes are
    /// decoded here, on the calling thread, when `decodingEncoded` (`cachedImage(for:)`).
    func memoryResponse(for request: ImageRequest, decodingEncoded: Bool) -> ImageResponse? {
        guard let (entry, use) = memoryEntry(for: request), use == .serve else { return nil }
        switch entry {
        case .image(let image):
            recorder.add(.memoryHits)
            return ImageResponse(bitmap: image.bitmap, source: .memory)
        case .data(let data):
            guard decodingEncoded else { return nil }
            do throws(ImagePipelineError) {
                let bitmap = try decodeNow(data.data, resize: decodeSize(for: request))
                recorder.add(.memoryHits)
                return ImageResponse(bitmap: bitmap, source: .memory)
            } catch {
                // Not served from here; the request's own load decides what its error is.
                return nil
            }
        }
    }

    /// True when the memory cache could serve `request` now (nothing counted, nothing decoded).
    func isInMemory(_ request: ImageRequest) -> Bool {
        memoryEntry(for: request)?.use == .serve
    }

    /// A stale decoded image in memory the request may revalidate, if any.
    func staleImage(for request: ImageRequest) -> CachedImage? {
        guard let (entry, use) = memoryEntry(for: request), use == .revalidate, case .image(let image) = entry else { return nil }
        return image
    }
}
