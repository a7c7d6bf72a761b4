import Foundation
@testable import ImageService
import Testing

@Suite("Service: cache lifetime")
struct CacheLifetimeTests {
    private let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("max-age is the TTL, capped at the URL's expiry, never negative; Expires is now + max-age")
    func lifetimes() {
        #expect(CacheLifetime(timeToLive: 3600, urlExpiry: nil, now: now).maxAge == 3600)
        #expect(CacheLifetime(timeToLive: 3600, urlExpiry: 1_800_000_060, now: now).maxAge == 60)
        #expect(CacheLifetime(timeToLive: 3600, urlExpiry: 1_900_000_000, now: now).maxAge == 3600)
        #expect(CacheLifetime(timeToLive: 3600, urlExpiry: 1_700_000_000, now: now).maxAge == 0)
        #expect(CacheLifetime(timeToLive: 3600, urlExpiry: 1_800_000_060, now: now).expires == "Fri, 15 Jan 2027 08:01:00 GMT")
    }

    @Test("extreme values cannot trap: Int.min and Int.max expiries, huge and negative TTLs")
    func extremes() {
        #expect(CacheLifetime(timeToLive: 3600, urlExpiry: .min, now: now).maxAge == 0)
        #expect(CacheLifetime(timeToLive: 3600, urlExpiry: .max, now: now).maxAge == 3600)
        #expect(CacheLifetime(timeToLive: .max, urlExpiry: nil, now: now).maxAge == CacheLifetime.longest)
        #expect(CacheLifetime(timeToLive: -5, urlExpiry: nil, now: now).maxAge == 0)
    }
}
