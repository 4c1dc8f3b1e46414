#include "protocol/temporal.h"

#include <charconv>

#include "absl/strings/str_cat.h"
#include "protocol/column_type.h"
#include "protocol/status_macros.h"

namespace binrelay::protocol {
namespace {

constexpr uint32_t kPow10[7] = {1, 10, 100, 1000, 10000, 100000, 1000000};
// MariaDB hires layouts (sql/field.cc: sec_part_bytes, datetime_hires_bytes,
// time_hires_bytes), indexed by fsp.
constexpr int kHiresFracBytes[7] = {0, 1, 1, 2, 2, 3, 3};
constexpr int kHiresDatetimeBytes[7] = {5, 6, 6, 7, 7, 7, 8};
constexpr int kHiresTimeBytes[7] = {3, 4, 4, 5, 5, 5, 6};
// TIME_MAX_VALUE_SECONDS + 1 (838:59:59 + 1 s): MariaDB hires TIME zero point.
constexpr int64_t kHiresTimeZeroSeconds = 838 * 3600 + 59 * 60 + 59 + 1;

// Writes v zero-padded to at least `width` digits at p; returns the end.
// Dates and times are formatted for every row, so the common widths
// (2 and 4 digits, in range) are written directly.
char* PutNum(char* p, uint64_t v, int width) {
  if (width == 2 && v < 100) {
    p[0] = static_cast<char>('0' + v / 10);
    p[1] = static_cast<char>('0' + v % 10);
    return p + 2;
  }
  if (width == 4 && v < 10000) {
    p[0] = static_cast<char>('0' + v / 1000);
    p[1] = static_cast<char>('0' + v / 100 % 10);
    p[2] = static_cast<char>('0' + v / 10 % 10);
    p[3] = static_cast<char>('0' + v % 10);
    return p + 4;
  }
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  for (int len = static_cast<int>(r.ptr - buf); len < width; ++len) *p++ = '0';
  for (const char* q = buf; q != r.ptr; ++q) *p++ = *q;
  return p;
}

char* PutFraction(char* p, uint32_t micro, int fsp) {
  if (fsp <= 0) return p;
  *p++ = '.';
  return PutNum(p, micro / kPow10[6 - fsp], fsp);
}

// Long enough for any TemporalParts (each field at most 10 digits).
constexpr size_t kTemporalTextMax = 80;

char* PutDate(char* p, const TemporalParts& t) {
  p = PutNum(p, t.year, 4);
  *p++ = '-';
  p = PutNum(p, t.month, 2);
  *p++ = '-';
  return PutNum(p, t.day, 2);
}

char* PutClock(char* p, const TemporalParts& t, int fsp) {
  p = PutNum(p, t.hour, 2);
  *p++ = ':';
  p = PutNum(p, t.minute, 2);
  *p++ = ':';
  p = PutNum(p, t.second, 2);
  return PutFraction(p, t.micro, fsp);
}

// Reads the fractional part of TIMESTAMP2/DATETIME2 (signed BE bytes; stored
// in units of 10^-(2*ceil(fsp/2)) s) and returns microseconds.
int64_t ReadFrac2(ByteCursor& in, int fsp) {
  switch (fsp) {
    case 1:
    case 2:
      return static_cast<int8_t>(in.U8()) * 10000LL;
    case 3:
    case 4:
      return static_cast<int16_t>(in.FixedBE(2)) * 100LL;
    case 5:
    case 6: {
      int64_t v = static_cast<int64_t>(in.FixedBE(3));
      if (v & 0x800000) v -= 0x1000000;
      return v;
    }
    default:
      return 0;
  }
}

absl::Status Truncated(ByteCursor& in, uint8_t type) {
  return in.status(absl::StrCat(AV(ColumnTypeName(type)), " value"));
}

absl::Status ReadDate(ByteCursor& in, TemporalParts* t) {
  uint32_t v = in.U24();
  if (!in.ok()) return Truncated(in, kTypeDate);
  t->day = v & 31;
  t->month = (v >> 5) & 15;
  t->year = v >> 9;
  return absl::OkStatus();
}

// Classic TIME: 3-byte LE signed integer [-]HHMMSS.
absl::Status ReadTimeClassic(ByteCursor& in, TemporalParts* t) {
  int32_t v = static_cast<int32_t>(in.U24());
  if (!in.ok()) return Truncated(in, kTypeTime);
  if (v & 0x800000) v -= 0x1000000;
  t->negative = v < 0;
  uint32_t a = static_cast<uint32_t>(v < 0 ? -v : v);
  t->hour = a / 10000;
  t->minute = a / 100 % 100;
  t->second = a % 100;
  return absl::OkStatus();
}

// Classic DATETIME: 8-byte LE integer YYYYMMDDhhmmss.
absl::Status ReadDatetimeClassic(ByteCursor& in, TemporalParts* t) {
  uint64_t v = in.U64();
  if (!in.ok()) return Truncated(in, kTypeDatetime);
  uint64_t date = v / 1000000, time = v % 1000000;
  t->year = static_cast<uint32_t>(date / 10000 % 100000);
  t->month = static_cast<uint32_t>(date / 100 % 100);
  t->day = static_cast<uint32_t>(date % 100);
  t->hour = static_cast<uint32_t>(time / 10000);
  t->minute = static_cast<uint32_t>(time / 100 % 100);
  t->second = static_cast<uint32_t>(time % 100);
  return absl::OkStatus();
}

TemporalParts TimestampParts(uint64_t seconds, uint32_t micro) {
  // Epoch 0 is the zero timestamp; SELECT shows it as the zero datetime.
  TemporalParts t;
  if (seconds != 0) t = CivilFromEpochSeconds(seconds);
  t.micro = seconds != 0 ? micro : 0;
  return t;
}

// The layouts whose content can be invalid are read (and checked) here,
// once, for decoding and for SkipTemporal alike.

// TIMESTAMP2: seconds and a fraction in microseconds.
absl::Status ReadTimestamp2(ByteCursor& in, int fsp, uint64_t* secs, uint32_t* micro) {
  *secs = in.FixedBE(4);
  const int64_t frac = ReadFrac2(in, fsp);
  if (!in.ok()) return Truncated(in, kTypeTimestamp2);
  if (frac < 0 || frac > 999999) {
    return absl::DataLossError(absl::StrCat("TIMESTAMP2 fraction ", frac, " out of range"));
  }
  *micro = static_cast<uint32_t>(frac);
  return absl::OkStatus();
}

// DATETIME2: the packed date and time (sign offset removed) and microseconds.
absl::Status ReadDatetime2(ByteCursor& in, int fsp, uint64_t* packed, uint32_t* micro) {
  const int64_t v = static_cast<int64_t>(in.FixedBE(5)) - 0x8000000000LL;
  const int64_t frac = ReadFrac2(in, fsp);
  if (!in.ok()) return Truncated(in, kTypeDatetime2);
  if (v < 0 || frac < 0 || frac > 999999) {
    return absl::DataLossError("DATETIME2 value is negative or has an invalid fraction");
  }
  *packed = static_cast<uint64_t>(v);
  *micro = static_cast<uint32_t>(frac);
  return absl::OkStatus();
}

// MariaDB 5.3 hires TIMESTAMP(fsp): 4-byte BE seconds + BE fraction in 10^-fsp s.
absl::Status ReadTimestampHires(ByteCursor& in, int fsp, uint64_t* secs, uint32_t* micro) {
  *secs = in.FixedBE(4);
  const uint64_t frac = in.FixedBE(kHiresFracBytes[fsp]);
  if (!in.ok()) return Truncated(in, kTypeTimestamp);
  const uint64_t m = frac * kPow10[6 - fsp];
  if (m > 999999) return absl::DataLossError("hires TIMESTAMP fraction out of range");
  *micro = static_cast<uint32_t>(m);
  return absl::OkStatus();
}

absl::Status ReadTimestamp2Parts(ByteCursor& in, int fsp, TemporalParts* t) {
  uint64_t secs;
  uint32_t micro;
  BR_RETURN_IF_ERROR(ReadTimestamp2(in, fsp, &secs, &micro));
  *t = TimestampParts(secs, micro);
  return absl::OkStatus();
}

absl::Status ReadDatetime2Parts(ByteCursor& in, int fsp, TemporalParts* t) {
  uint64_t v;
  uint32_t micro;
  BR_RETURN_IF_ERROR(ReadDatetime2(in, fsp, &v, &micro));
  uint64_t ymd = v >> 17, hms = v & 0x1FFFF;
  uint64_t ym = ymd >> 5;
  t->day = ymd & 31;
  t->month = static_cast<uint32_t>(ym % 13);
  t->year = static_cast<uint32_t>(ym / 13);
  t->hour = static_cast<uint32_t>(hms >> 12);
  t->minute = (hms >> 6) & 63;
  t->second = hms & 63;
  t->micro = micro;
  return absl::OkStatus();
}

absl::Status ReadTime2Parts(ByteCursor& in, int fsp, TemporalParts* t) {
  int64_t packed;
  if (fsp >= 5) {
    packed = static_cast<int64_t>(in.FixedBE(6)) - 0x800000000000LL;
  } else {
    int64_t intpart = static_cast<int64_t>(in.FixedBE(3)) - 0x800000;
    int64_t frac = 0;
    if (fsp >= 1) {
      // The fraction is unsigned on disk; a negative value borrows from the
      // integer part (MySQL my_time.cc my_time_packed_from_binary).
      const int width = fsp <= 2 ? 1 : 2;
      const int64_t base = width == 1 ? 0x100 : 0x10000;
      frac = static_cast<int64_t>(in.FixedBE(width));
      if (intpart < 0 && frac != 0) {
        intpart += 1;
        frac -= base;
      }
      frac *= width == 1 ? 10000 : 100;
    }
    packed = intpart * (int64_t{1} << 24) + frac;
  }
  if (!in.ok()) return Truncated(in, kTypeTime2);
  *t = UnpackTimePacked(packed);
  return absl::OkStatus();
}

absl::Status ReadTimestampHiresParts(ByteCursor& in, int fsp, TemporalParts* t) {
  uint64_t secs;
  uint32_t micro;
  BR_RETURN_IF_ERROR(ReadTimestampHires(in, fsp, &secs, &micro));
  *t = TimestampParts(secs, micro);
  return absl::OkStatus();
}

// MariaDB 5.3 hires DATETIME(fsp): BE unsigned of
// ((((year*13+month)*32+day)*24+hour)*60+minute)*60+second)*10^6+µs, divided by 10^(6-fsp).
absl::Status ReadDatetimeHires(ByteCursor& in, int fsp, TemporalParts* out) {
  uint64_t v = in.FixedBE(kHiresDatetimeBytes[fsp]);
  if (!in.ok()) return Truncated(in, kTypeDatetime);
  v *= kPow10[6 - fsp];
  TemporalParts& t = *out;
  t.micro = static_cast<uint32_t>(v % 1000000);
  v /= 1000000;
  t.second = static_cast<uint32_t>(v % 60);
  v /= 60;
  t.minute = static_cast<uint32_t>(v % 60);
  v /= 60;
  t.hour = static_cast<uint32_t>(v % 24);
  v /= 24;
  t.day = static_cast<uint32_t>(v % 32);
  v /= 32;
  t.month = static_cast<uint32_t>(v % 13);
  t.year = static_cast<uint32_t>(v / 13);
  return absl::OkStatus();
}

// MariaDB 5.3 hires TIME(fsp): BE unsigned of (signed µs / 10^(6-fsp)) + zero point.
absl::Status ReadTimeHires(ByteCursor& in, int fsp, TemporalParts* out) {
  uint64_t raw = in.FixedBE(kHiresTimeBytes[fsp]);
  if (!in.ok()) return Truncated(in, kTypeTime);
  const int64_t scale = kPow10[6 - fsp];
  const int64_t zero = kHiresTimeZeroSeconds * 1000000 / scale;
  int64_t v = (static_cast<int64_t>(raw) - zero) * scale;
  TemporalParts& t = *out;
  t.negative = v < 0;
  uint64_t a = static_cast<uint64_t>(v < 0 ? -v : v);
  t.micro = static_cast<uint32_t>(a % 1000000);
  a /= 1000000;
  t.second = static_cast<uint32_t>(a % 60);
  t.minute = static_cast<uint32_t>(a / 60 % 60);
  t.hour = static_cast<uint32_t>(a / 3600);
  return absl::OkStatus();
}

}  // namespace

void AppendDateText(const TemporalParts& t, std::string* out) {
  char buf[kTemporalTextMax];
  out->append(buf, PutDate(buf, t));
}

void AppendDatetimeText(const TemporalParts& t, int fsp, std::string* out) {
  char buf[kTemporalTextMax];
  char* p = PutDate(buf, t);
  *p++ = ' ';
  out->append(buf, PutClock(p, t, fsp));
}

void AppendTimeText(const TemporalParts& t, int fsp, std::string* out) {
  char buf[kTemporalTextMax];
  char* p = buf;
  if (t.negative) *p++ = '-';
  out->append(buf, PutClock(p, t, fsp));
}

TemporalParts UnpackDatetimePacked(int64_t packed) {
  TemporalParts t;
  t.negative = packed < 0;
  // Unsigned negation: -INT64_MIN does not exist (a damaged value may be it).
  uint64_t a = packed < 0 ? 0 - static_cast<uint64_t>(packed) : static_cast<uint64_t>(packed);
  t.micro = static_cast<uint32_t>(a % (1 << 24));
  uint64_t ymdhms = a >> 24;
  uint64_t ymd = ymdhms >> 17, hms = ymdhms & 0x1FFFF;
  uint64_t ym = ymd >> 5;
  t.day = ymd & 31;
  t.month = static_cast<uint32_t>(ym % 13);
  t.year = static_cast<uint32_t>(ym / 13);
  t.second = hms & 63;
  t.minute = (hms >> 6) & 63;
  t.hour = static_cast<uint32_t>(hms >> 12);
  return t;
}

TemporalParts UnpackTimePacked(int64_t packed) {
  TemporalParts t;
  t.negative = packed < 0;
  // Unsigned negation: -INT64_MIN does not exist (a damaged value may be it).
  uint64_t a = packed < 0 ? 0 - static_cast<uint64_t>(packed) : static_cast<uint64_t>(packed);
  uint64_t hms = a >> 24;
  t.micro = static_cast<uint32_t>(a & 0xFFFFFF);
  t.hour = (hms >> 12) & 1023;
  t.minute = (hms >> 6) & 63;
  t.second = hms & 63;
  return t;
}

TemporalParts CivilFromEpochSeconds(uint64_t seconds) {
  // Days to civil date (proleptic Gregorian), after H. Hinnant's algorithm.
  int64_t days = static_cast<int64_t>(seconds / 86400);
  uint64_t rem = seconds % 86400;
  days += 719468;
  int64_t era = days / 146097;
  int64_t doe = days - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  int64_t d = doy - (153 * mp + 2) / 5 + 1;
  int64_t m = mp < 10 ? mp + 3 : mp - 9;
  int64_t y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  TemporalParts t;
  t.year = static_cast<uint32_t>(y);
  t.month = static_cast<uint32_t>(m);
  t.day = static_cast<uint32_t>(d);
  t.hour = static_cast<uint32_t>(rem / 3600);
  t.minute = static_cast<uint32_t>(rem / 60 % 60);
  t.second = static_cast<uint32_t>(rem % 60);
  return t;
}

bool IsTemporalType(uint8_t type) {
  switch (type) {
    case kTypeDate:
    case kTypeNewDate:
    case kTypeTime:
    case kTypeDatetime:
    case kTypeTimestamp:
    case kTypeTimestamp2:
    case kTypeDatetime2:
    case kTypeTime2:
      return true;
    default:
      return false;
  }
}

absl::Status DecodeTemporalParts(ByteCursor& in, uint8_t type, uint16_t meta, TemporalParts* out,
                                 TemporalForm* form) {
  if (meta > 6) {
    return absl::InvalidArgumentError(absl::StrCat(
        "fractional-second precision ", meta, " > 6 in metadata of ", AV(ColumnTypeName(type))));
  }
  const int fsp = meta;
  *out = TemporalParts();
  switch (type) {
    case kTypeDate:
    case kTypeNewDate:
      *form = TemporalForm::kDate;
      return ReadDate(in, out);
    case kTypeTime:
      *form = TemporalForm::kTime;
      return fsp ? ReadTimeHires(in, fsp, out) : ReadTimeClassic(in, out);
    case kTypeDatetime:
      *form = TemporalForm::kDatetime;
      return fsp ? ReadDatetimeHires(in, fsp, out) : ReadDatetimeClassic(in, out);
    case kTypeTimestamp:
      *form = TemporalForm::kDatetime;
      if (fsp) return ReadTimestampHiresParts(in, fsp, out);
      {
        uint64_t secs = in.U32();
        if (!in.ok()) return Truncated(in, type);
        *out = TimestampParts(secs, 0);
      }
      return absl::OkStatus();
    case kTypeTimestamp2:
      *form = TemporalForm::kDatetime;
      return ReadTimestamp2Parts(in, fsp, out);
    case kTypeDatetime2:
      *form = TemporalForm::kDatetime;
      return ReadDatetime2Parts(in, fsp, out);
    case kTypeTime2:
      *form = TemporalForm::kTime;
      return ReadTime2Parts(in, fsp, out);
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("type ", type, " (", AV(ColumnTypeName(type)), ") is not temporal"));
  }
}

absl::Status DecodeTemporalText(ByteCursor& in, uint8_t type, uint16_t meta, std::string* out) {
  TemporalParts t;
  TemporalForm form;
  BR_RETURN_IF_ERROR(DecodeTemporalParts(in, type, meta, &t, &form));
  switch (form) {
    case TemporalForm::kDate:
      AppendDateText(t, out);
      break;
    case TemporalForm::kDatetime:
      AppendDatetimeText(t, meta, out);
      break;
    case TemporalForm::kTime:
      AppendTimeText(t, meta, out);
      break;
  }
  return absl::OkStatus();
}

absl::StatusOr<size_t> TemporalBinarySize(uint8_t type, uint16_t meta) {
  if (meta > 6) {
    return absl::InvalidArgumentError(absl::StrCat(
        "fractional-second precision ", meta, " > 6 in metadata of ", AV(ColumnTypeName(type))));
  }
  const int fsp = meta;
  // The 2-type fractions take ceil(fsp / 2) bytes (MySQL my_time.cc
  // my_datetime_binary_length and friends).
  const size_t frac2 = static_cast<size_t>((fsp + 1) / 2);
  switch (type) {
    case kTypeDate:
    case kTypeNewDate:
      return 3;
    case kTypeTime:
      return fsp ? static_cast<size_t>(kHiresTimeBytes[fsp]) : 3;
    case kTypeDatetime:
      return fsp ? static_cast<size_t>(kHiresDatetimeBytes[fsp]) : 8;
    case kTypeTimestamp:
      return 4 + static_cast<size_t>(fsp ? kHiresFracBytes[fsp] : 0);
    case kTypeTimestamp2:
      return 4 + frac2;
    case kTypeDatetime2:
      return 5 + frac2;
    case kTypeTime2:
      return 3 + frac2;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("type ", type, " (", AV(ColumnTypeName(type)), ") is not temporal"));
  }
}

absl::Status SkipTemporal(ByteCursor& in, uint8_t type, uint16_t meta) {
  BR_ASSIGN_OR_RETURN(size_t size, TemporalBinarySize(type, meta));
  const int fsp = meta;
  // The layouts with content checks are read as decoding reads them.
  uint64_t ignored;
  uint32_t micro;
  switch (type) {
    case kTypeTimestamp2:
      return ReadTimestamp2(in, fsp, &ignored, &micro);
    case kTypeDatetime2:
      return ReadDatetime2(in, fsp, &ignored, &micro);
    case kTypeTimestamp:
      if (fsp) return ReadTimestampHires(in, fsp, &ignored, &micro);
      [[fallthrough]];
    default:
      in.Skip(size);
      return in.ok() ? absl::OkStatus() : Truncated(in, type);
  }
}

}  // namespace binrelay::protocol
