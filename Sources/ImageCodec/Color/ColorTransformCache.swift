import Locking

/// Transforms by profile bytes and layout, shared by every decode in the process: a batch of
/// photos from one phone carries the same profile, and builds its transform once.
///
/// `@unchecked Sendable`: the state is only touched under `lock` (the package's pthread lock:
/// `Synchronization.Mutex` waits on a raw futex that the thread sanitizer does not model).
final class ColorTransformCache: @unchecked Sendable {
    static let shared = ColorTransformCache(capacity: 32)

    /// A cached verdict for a profile: convert with this transform, leave as is, or ignore.
    enum Entry: Sendable {
        case transform(ColorTransform)
        case sRGB
        case rejected(String)
    }

    /// Equal when the profiles are equal byte for byte; hashed on the length, the 128-byte
    /// ICC header (size, creator, dates, profile ID) and the last 64 bytes only, so a decode
    /// does not hash a whole CMYK profile (hundreds of KB) to find its transform. Profiles that
    /// share those bytes and differ elsewhere are still told apart by equality.
    private struct Key: Hashable {
        let profile: [UInt8]
        let layout: ColorLayout

        func hash(into hasher: inout Hasher) {
            hasher.combine(profile.count)
            profile.withUnsafeBytes { bytes in
                hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: bytes.prefix(128)))
                hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: bytes.suffix(64)))
            }
            hasher.combine(layout)
        }
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        /// Insertion order, oldest first, for eviction beyond `capacity`.
        var order: [Key] = []
        var statistics = ColorManagementStatistics()
    }

    private let capacity: Int
    private let lock = Lock()
    private var state = State()
    /// Builds a verdict (Little CMS' transform); a seam so tests can hold two builds at once.
    private let build: @Sendable (_ profile: [UInt8], _ layout: ColorLayout) -> ColorTransform.Outcome

    init(
        capacity: Int,
        build: @escaping @Sendable (_ profile: [UInt8], _ layout: ColorLayout) -> ColorTransform.Outcome = {
            ColorTransform.toSRGB(profile: $0, layout: $1)
        }
    ) {
        self.capacity = capacity
        self.build = build
    }

    var statistics: ColorManagementStatistics { lock.withLock { state.statistics } }

    /// The verdict for `profile` on rows in `layout`, built on first use. Built outside the
    /// lock (it takes milliseconds); two threads racing on a new profile both build, one keeps
    /// (and only the kept one counts in `transformsBuilt`).
    func entry(for profile: [UInt8], layout: ColorLayout) -> Entry {
        let key = Key(profile: profile, layout: layout)
        if let cached = lock.withLock({ () -> Entry? in
            guard let entry = state.entries[key] else { return nil }
            state.statistics.cacheHits += 1
            Self.count(entry, in: &state.statistics)
            return entry
        }) {
            return cached
        }
        let entry: Entry =
            switch build(profile, layout) {
            case .transform(let transform): .transform(transform)
            case .sRGB: .sRGB
            case .rejected(let reason): .rejected(reason)
            }
        return lock.withLock {
            if let existing = state.entries[key] {
                // Another thread's build won the race: this one is discarded, and not counted.
                Self.count(existing, in: &state.statistics)
                return existing
            }
            if case .transform = entry { state.statistics.transformsBuilt += 1 }
            Self.count(entry, in: &state.statistics)
            state.entries[key] = entry
            state.order.append(key)
            if state.order.count > capacity { state.entries[state.order.removeFirst()] = nil }
            return entry
        }
    }

    /// Records that a decode ignored a profile that does not fit its image.
    func countIgnored() {
        lock.withLock { state.statistics.ignoredProfiles += 1 }
    }

    private static func count(_ entry: Entry, in statistics: inout ColorManagementStatistics) {
        switch entry {
        case .transform: break
        case .sRGB: statistics.sRGBProfiles += 1
        case .rejected: statistics.ignoredProfiles += 1
        }
    }
}
