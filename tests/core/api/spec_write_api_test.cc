// The public API's spec parameters, spec checks, inline specs, write
// options and learned-table resizing (include/pe/table.h, pe/resize.h):
// what `pe generate` and `pe verify --resize-from` are built on. Expected
// messages are those `pe generate` printed for the same flags before the
// command moved onto this API; expected values are hand-derived (RoBERTa's
// positions start at padding_idx + 1 = 2, transformers
// create_position_ids_from_input_ids). Uses only <pe/...> headers.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <pe/pe.h>

namespace pe {
namespace {

std::string TempPath(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("pe_spec_write_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

template <class F>
std::string ErrorOf(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

const SpecParamInfo& Param(const std::vector<SpecParamInfo>& all, const std::string& key) {
  const auto it = std::find_if(all.begin(), all.end(), [&](const SpecParamInfo& p) { return p.key == key; });
  if (it == all.end()) throw std::runtime_error("no parameter " + key);
  return *it;
}

TEST(SpecParamsTest, OneEntryPerSpecKeyInItsOrder) {
  const std::vector<SpecParamInfo> all = SpecParams();
  std::vector<std::string> keys;
  for (const auto& p : all) keys.push_back(p.key);
  EXPECT_EQ(keys, SpecKeys());
  const SpecParamInfo& d = Param(all, "d_model");
  EXPECT_EQ(d.flag, "--d-model,--head-dim");
  EXPECT_EQ(d.type, SpecParamType::kInteger);
  EXPECT_TRUE(d.common);
  const SpecParamInfo& base = Param(all, "base");
  EXPECT_EQ(base.type, SpecParamType::kReal);
  EXPECT_EQ(base.default_value, "10000");
  EXPECT_TRUE(base.show_default);
  EXPECT_EQ(Param(all, "rope_theta").alias_of, "base");
  EXPECT_EQ(Param(all, "rope_theta").flag, "");
  EXPECT_EQ(Param(all, "no_truncate").type, SpecParamType::kNegSwitch);
  EXPECT_EQ(Param(all, "no_truncate").default_value, "false");  // truncation is on unless cleared
  EXPECT_EQ(Param(all, "cls_token").type, SpecParamType::kSwitch);
  EXPECT_EQ(Param(all, "grid").type, SpecParamType::kGrid);
  EXPECT_EQ(Param(all, "dtype").help, "Element type: float16, bfloat16, float32, float64");
  EXPECT_FALSE(Param(all, "heads").common);
}

TEST(SpecParamsTest, EveryDefaultIsWhatASpecWithoutTheKeyUses) {
  // Setting every parameter to its default changes nothing a table holds.
  const Spec plain = Spec("sinusoidal").Set("d_model", 8).Set("max_len", 4);
  Spec restated = plain;
  for (const SpecParamInfo& p : SpecParams())
    if (p.key == "base" || p.key == "start" || p.key == "dtype") restated.Set(p.key, std::string_view(p.default_value));
  Table a = GenerateTable(plain), b = GenerateTable(restated);
  std::vector<std::byte> x(a.tensor(0).info().byte_size()), y(b.tensor(0).info().byte_size());
  a.tensor(0).ReadAll(x.data(), x.size());
  b.tensor(0).ReadAll(y.data(), y.size());
  EXPECT_EQ(x, y);
}

TEST(CheckSpecTest, RefusesInTheOrderOfTheCommandLine) {
  // The scheme's flags before the values: a bad value of a flag the scheme
  // does not take is named as the flag that does not apply.
  EXPECT_EQ(ErrorOf([] { CheckSpec(Spec("alibi").Set("grid", "4x4").Set("heads", 4)); }),
            "--grid: applies to sincos-2d and vision-rope; the scheme is alibi");
  EXPECT_EQ(ErrorOf([] { CheckSpec(Spec("").Set("heads", 4).Set("max_len", 4)); }),
            "--heads: applies to alibi, kerple and sandwich; the scheme is sinusoidal (the default: no --scheme given)");
  EXPECT_EQ(ErrorOf([] { CheckSpec(Spec("sincos-2d").Set("d_model", 16).Set("grid", "bad").Set("dtype", "nope")); }),
            "--grid 'bad': expected HxW with positive integers, e.g. 14x14 or 16x8");
  EXPECT_EQ(ErrorOf([] { CheckSpec(Spec("").Set("d_modle", 8)); }), "parameter 'd_modle': unknown; did you mean 'd_model'?");
  // Domains are the generator's: d_model 0 passes the check.
  EXPECT_EQ(ErrorOf([] { CheckSpec(Spec("").Set("d_model", 0)); }), "(no error)");
  EXPECT_EQ(CheckSpec(Spec("RoPE").Set("head_dim", 8)).scheme, "rope");
  EXPECT_EQ(CheckSpec(Spec("").Set("d_model", 8)).scheme, "");
}

TEST(InlineSpecTest, KeysCanonicalValuesParsed) {
  const std::optional<Spec> s = InlineSpecOf("RoPE:head-dim=128,base=5e5,no-truncate");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->scheme, "rope");
  auto value = [&](const std::string& k) {
    for (const auto& [key, v] : s->params)
      if (key == k) return v;
    return std::string("(none)");
  };
  EXPECT_EQ(value("d_model"), "128");
  EXPECT_EQ(value("base"), "500000");
  EXPECT_EQ(value("no_truncate"), "true");
  EXPECT_EQ(s->params.size(), 3u);
  EXPECT_FALSE(InlineSpecOf("table.npy").has_value());
  EXPECT_FALSE(InlineSpecOf("nosuchscheme:x=1").has_value());
  EXPECT_EQ(ErrorOf([] { InlineSpecOf("rope:head-dim=8,heads=2"); }).rfind("input 'rope:head-dim=8,heads=2': --heads", 0),
            0u);
}

TEST(WriteOptionsTest, FormatsAndRefusals) {
  EXPECT_EQ(OutputFormat("-"), "csv");
  EXPECT_EQ(OutputFormat("t.h5"), "hdf5");
  EXPECT_EQ(OutputFormat("t.bin", "npy"), "npy");
  EXPECT_EQ(WritableTableFormats(), (std::vector<std::string>{"csv", "json", "npy", "hdf5", "safetensors"}));
  EXPECT_EQ(ErrorOf([] { OutputFormat("t.xyz"); }),
            "-o 't.xyz': unknown file extension; use --format (csv, json, npy, hdf5, safetensors)");
  Table t = GenerateTable(Spec().Set("d_model", 8).Set("max_len", 4));
  WriteOptions gz;
  gz.gzip_level = 4;
  EXPECT_EQ(ErrorOf([&] { WriteTableFile(t, TempPath("t.npy"), gz); }),
            "--compress 4: applies to HDF5 output only (-o FILE.h5)");
  EXPECT_FALSE(std::filesystem::exists(TempPath("t.npy")));
}

TEST(WriteOptionsTest, GzipShrinksHdf5AndThreadsKeepTheBytes) {
  Table t = GenerateTable(Spec().Set("d_model", 256).Set("max_len", 2048));
  WriteOptions plain, gz, one, two;
  gz.gzip_level = 6;
  one.threads = 1;
  two.threads = 2;
  WriteTableFile(t, TempPath("plain.h5"), plain);
  WriteTableFile(t, TempPath("gz.h5"), gz);
  EXPECT_LT(std::filesystem::file_size(TempPath("gz.h5")), std::filesystem::file_size(TempPath("plain.h5")));
  WriteTableFile(t, TempPath("one.npy"), one);
  WriteTableFile(t, TempPath("two.npy"), two);
  Table a = OpenTableFile(TempPath("one.npy")), b = OpenTableFile(TempPath("two.npy")), c = OpenTableFile(TempPath("gz.h5"));
  std::vector<std::byte> x(a.tensor(0).info().byte_size()), y(x.size()), z(x.size());
  a.tensor(0).ReadAll(x.data(), x.size());
  b.tensor(0).ReadAll(y.data(), y.size());
  c.tensor(0).ReadAll(z.data(), z.size());
  EXPECT_EQ(x, y);
  EXPECT_EQ(x, z);
}

TEST(WriteOptionsTest, ProgressCountsUpToEveryRow) {
  Table t = GenerateTable(Spec().Set("d_model", 512).Set("max_len", 4096));
  std::vector<std::int64_t> done;
  WriteOptions w;
  w.fsync = true;
  w.progress = [&](std::int64_t rows_done, std::int64_t rows) {
    EXPECT_EQ(rows, 4096);
    done.push_back(rows_done);
  };
  WriteTableFile(t, TempPath("p.npy"), w);
  ASSERT_GT(done.size(), 1u);  // 8 MiB in blocks of 512 KiB
  EXPECT_TRUE(std::is_sorted(done.begin(), done.end()));
  EXPECT_EQ(done.back(), 4096);
  // The callback was this call's: another write reports nothing to it.
  const std::size_t n = done.size();
  WriteTableFile(t, TempPath("q.npy"));
  EXPECT_EQ(done.size(), n);
}

TEST(ResizeApiTest, RulesFromModelTypesAndTheConfig) {
  EXPECT_EQ(ResizeRuleOf("vit"), "hf-vit");
  EXPECT_EQ(ResizeRuleOf("siglip2_vision_model"), "siglip2");
  EXPECT_EQ(ResizeRuleOf("roberta"), "bert-tile");
  EXPECT_EQ(ResizeRuleOf(""), "");
  EXPECT_EQ(ErrorOf([] { ResizeRuleOf("gpt2"); }), "--resize-rule: config model_type 'gpt2' has no known rule; name one");
  LearnedTable roberta;
  roberta.model_type = "roberta";
  roberta.pad_token_id = 1;
  EXPECT_EQ(ResizeOptionsFor({}, roberta).offset, 2);  // positions start at padding_idx + 1
  LearnedTable vit;
  vit.model_type = "vit";
  vit.image_size = 224;
  vit.patch_size = 16;
  const ResizeOptions o = ResizeOptionsFor({}, vit, "24");
  EXPECT_EQ(o.rule, "hf-vit");
  EXPECT_EQ(o.from_h, 14);
  EXPECT_EQ(o.to_w, 24);
  EXPECT_EQ(ErrorOf([&] { ResizeOptionsFor({}, vit, "", "1z4"); }), "--from-grid '1z4': expected HxW, e.g. 14x14");
}

TEST(ResizeApiTest, ResizedTableIsWrittenWithItsProvenance) {
  // A 1 + 2x2 table to 1 + 4x4 by hf-vit; the CLS row is kept as is.
  std::vector<float> pos(5 * 3);
  for (std::size_t i = 0; i < pos.size(); ++i) pos[i] = static_cast<float>(i) * 0.25f;
  ResizeOptions o;
  o.rule = "hf-vit";
  o.to_h = o.to_w = 4;
  const ResizedTable r = Resize(pos.data(), 5, 3, o);
  ASSERT_EQ(r.rows, 17);
  Table t = ResizedTableOf(r, "pos.npy");
  EXPECT_EQ(t.names(), (std::vector<std::string>{"position_embeddings"}));
  ASSERT_NE(FindMeta(t.metadata(), "resize_source"), nullptr);
  EXPECT_EQ(MetaText(*FindMeta(t.metadata(), "resize_source")), "pos.npy");
  EXPECT_EQ(MetaText(*FindMeta(t.metadata(), "resize")), r.description);
  std::vector<float> row0(3);
  t.tensor(0).ReadRows(0, 1, row0.data(), row0.size() * sizeof(float));
  EXPECT_EQ(row0, (std::vector<float>{0.0f, 0.25f, 0.5f}));
  const ResizeDiagnosis same = DiagnoseResize(pos.data(), 5, 3, o, r.values.data(), r.rows, r.cols);
  EXPECT_TRUE(same.bit_exact && same.within_bound && same.faults.empty());
}

}  // namespace
}  // namespace pe
