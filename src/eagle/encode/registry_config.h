#pragma once
// Builds the EncoderRegistry from configuration: a map label -> implementation.
//
//   encoders:
//     glove:             {type: static, path: build/data/glove100.eaglewv, sif_a: 0.001}
//     pubmedbert:        {type: bert, path: /models/pubmedbert, pooling: cls, max_length: 512}
//     medcpt-query:      {type: bert, path: /models/MedCPT-Article-Encoder,
//                         query_path: /models/MedCPT-Query-Encoder}
//     medcpt-rerank:     {type: bert-cross, path: /models/MedCPT-Cross-Encoder}
//     text-embedding-v4: {type: openai, base_url: https://dashscope.aliyuncs.com/compatible-mode,
//                         model: text-embedding-v4, dim: 1024, api_key_env: DASHSCOPE_API_KEY}
//     tei-embed:         {type: tei, base_url: http://127.0.0.1:8080, dim: 768}
//     qwen3-rerank:      {type: cohere-rerank, base_url: ..., model: qwen3-rerank, api_key_env: ...}
//     tei-rerank:        {type: tei-rerank, base_url: http://127.0.0.1:8081}
//     m2v:               {type: model2vec, path: /models/potion-base-8M}
//     molformer:         {type: chem, radius: 2, bits: 2048}   (RDKit Morgan, TANIMOTO)
//     dct-lowfreq:       {type: descriptor, max_pixels: 50000000} (images: dct-lowfreq-v1, IP)
//     qwen3-vl:          {type: dashscope-multimodal, base_url: https://dashscope.aliyuncs.com,
//                         model: qwen3-vl-embedding, dim: 2048, api_key_env: DASHSCOPE_API_KEY}
//                        (also jina-clip, cohere-embed: images and text in one space, IP)
//
// Every entry is built (files opened, models loaded) at start, so a bad path or a
// missing field is an error naming the label before the first query. Each encoder's
// info().identity says what makes its vectors (identified() in encoder.h): a
// collection records it, and refuses the label once it names something else.
#include <nlohmann/json.hpp>

#include "eagle/encode/chem/chem.h"
#include "eagle/encode/encoder.h"
#include "eagle/encode/static/word_vectors.h"

namespace eagle::encode {

void add_from_config(EncoderRegistry& registry, const nlohmann::json& encoders);

// The static and chem encoders with their identities, as add_from_config makes them
// (the embedded defaults use these, so a default and a configured twin compare).
std::unique_ptr<Encoder> make_identified_static(const std::string& label, const std::string& path,
                                                StaticEncoderOptions options = {});
std::unique_ptr<Encoder> make_identified_chem(const std::string& label, chem::FingerprintParams params = {});

}  // namespace eagle::encode
